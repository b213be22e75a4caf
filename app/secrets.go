package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zalando/go-keyring"
)

// Keyring is the OS keychain, as go-keyring exposes it.
type Keyring interface {
	Get(service, user string) (string, error)
	Set(service, user, secret string) error
	Delete(service, user string) error
}

// OSKeyring is the real keychain (Secret Service on Linux, Keychain on
// macOS, Credential Manager on Windows).
type OSKeyring struct{}

// Get reads a secret.
func (OSKeyring) Get(service, user string) (string, error) { return keyring.Get(service, user) }

// Set stores a secret.
func (OSKeyring) Set(service, user, secret string) error { return keyring.Set(service, user, secret) }

// Delete removes a secret.
func (OSKeyring) Delete(service, user string) error { return keyring.Delete(service, user) }

// KeyringService is the service name Herald's secrets are filed under.
const KeyringService = "herald-desktop"

// keyringTimeout bounds every keychain call: a locked or absent keychain
// daemon must not hang the app.
const keyringTimeout = 5 * time.Second

// ErrNoKeychain means no OS keychain answered; secrets then live only in
// memory for this session.
var ErrNoKeychain = errors.New("no system keychain is available (on Linux: install and unlock gnome-keyring or KWallet); secrets are kept for this session only and must be entered again after a restart")

// Secrets stores gateway credentials in the keychain, never on disk. When
// the keychain is unavailable it keeps them in memory (session-only) and
// says so.
type Secrets struct {
	kr      Keyring
	timeout time.Duration

	mu          sync.Mutex
	sessionOnly map[string]string
	unavailable bool
}

// NewSecrets wraps a keychain.
func NewSecrets(kr Keyring) *Secrets {
	return &Secrets{kr: kr, timeout: keyringTimeout, sessionOnly: map[string]string{}}
}

// SessionOnly reports whether secrets are being kept in memory only.
func (s *Secrets) SessionOnly() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unavailable
}

// bounded runs fn with the keychain timeout.
func (s *Secrets) bounded(fn func() error) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("the system keychain did not answer within %s (is it locked?)", s.timeout)
	}
}

func secretKey(gateway, kind string) string { return gateway + "/" + kind }

// Set stores a gateway secret (kind: token, password, key, cookie).
func (s *Secrets) Set(gateway, kind, secret string) error {
	k := secretKey(gateway, kind)
	err := s.bounded(func() error { return s.kr.Set(KeyringService, k, secret) })
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.unavailable = true
		s.sessionOnly[k] = secret
		return fmt.Errorf("%w (%v)", ErrNoKeychain, err)
	}
	delete(s.sessionOnly, k)
	return nil
}

// Get returns a gateway secret; "" with a nil error when none is stored.
func (s *Secrets) Get(gateway, kind string) (string, error) {
	k := secretKey(gateway, kind)
	s.mu.Lock()
	if v, ok := s.sessionOnly[k]; ok {
		s.mu.Unlock()
		return v, nil
	}
	s.mu.Unlock()
	var v string
	err := s.bounded(func() error {
		var e error
		v, e = s.kr.Get(KeyringService, k)
		return e
	})
	if errors.Is(err, keyring.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		s.mu.Lock()
		s.unavailable = true
		s.mu.Unlock()
		return "", fmt.Errorf("%w (%v)", ErrNoKeychain, err)
	}
	return v, nil
}

// Delete forgets a gateway secret everywhere.
func (s *Secrets) Delete(gateway, kind string) error {
	k := secretKey(gateway, kind)
	s.mu.Lock()
	delete(s.sessionOnly, k)
	s.mu.Unlock()
	err := s.bounded(func() error { return s.kr.Delete(KeyringService, k) })
	if err != nil && !errors.Is(err, keyring.ErrNotFound) {
		return fmt.Errorf("removing the secret from the keychain failed: %v", err)
	}
	return nil
}
