package service

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The control socket is only as private as the folder it lives in: with
// XDG_RUNTIME_DIR unset it sits in the shared temp folder, where another
// local user could create herald-UID first and serve a fake socket that
// lists invented approvals and swallows answers. So both ends check, with
// lstat (never following a symlink), that the folder is a real directory
// owned by this user with mode 0700 and that the socket is a real socket
// owned by this user with mode 0600; and then that the process at the
// other end of the connection runs as this user (SO_PEERCRED on Linux,
// LOCAL_PEERCRED on macOS).

// ErrUnsafeControl is wrapped by every refusal of an unsafe control
// socket path or peer.
var ErrUnsafeControl = errors.New("unsafe control socket")

type unsafeControlError struct{ msg string }

func (e unsafeControlError) Error() string { return e.msg }
func (e unsafeControlError) Is(target error) bool {
	return target == ErrUnsafeControl
}

func unsafef(format string, args ...any) error {
	return unsafeControlError{fmt.Sprintf(format, args...)}
}

// checkControlDir checks the socket's folder for user uid.
func checkControlDir(dir string, uid int) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("cannot check the control socket folder %s: %v", dir, err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return unsafef("the control socket folder %s is a symlink, which another user may have planted; remove it (rm %s) or set XDG_RUNTIME_DIR, then start Herald again", dir, dir)
	case !fi.IsDir():
		return unsafef("the control socket folder %s is not a directory; remove it or set XDG_RUNTIME_DIR, then start Herald again", dir)
	}
	if owner, ok := fileOwner(fi); ok && owner != uid {
		return unsafef("the control socket folder %s belongs to another user (uid %d, you are %d), who could fake Herald; remove it as that user or root, or set XDG_RUNTIME_DIR, then start Herald again", dir, owner, uid)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		return unsafef("the control socket folder %s has mode %04o, so other users may reach it; run `chmod 700 %s` (or remove it), then start Herald again", dir, perm, dir)
	}
	return nil
}

// checkControlSocket checks an existing socket file for user uid. It
// returns an error wrapping fs.ErrNotExist when there is none.
func checkControlSocket(path string, uid int) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return unsafef("the control socket %s is a symlink, which another user may have planted; remove it (rm %s), then start Herald again", path, path)
	case fi.Mode()&fs.ModeSocket == 0:
		return unsafef("%s is not a socket but should be Herald's control socket; remove it, then start Herald again", path)
	}
	if owner, ok := fileOwner(fi); ok && owner != uid {
		return unsafef("the control socket %s belongs to another user (uid %d, you are %d), who could fake Herald; remove it, then start Herald again", path, owner, uid)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		return unsafef("the control socket %s has mode %04o, so other users may reach it; stop the Herald serving it and remove it, then start Herald again", path, perm)
	}
	return nil
}

// prepareControlDir creates the socket's folder if needed and checks it.
func prepareControlDir(dir string, uid int) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return fmt.Errorf("cannot create %s: %v", filepath.Dir(dir), err)
		}
		// Mkdir, not MkdirAll: it fails rather than accept a folder that
		// someone else created in the meantime; the check below decides.
		if err := os.Mkdir(dir, 0o700); err == nil {
			if err := os.Chmod(dir, 0o700); err != nil {
				return fmt.Errorf("cannot make %s private: %v", dir, err)
			}
		} else if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("cannot create the control socket folder %s: %v", dir, err)
		}
	}
	return checkControlDir(dir, uid)
}
