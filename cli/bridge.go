package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	hermesplugin "github.com/herald-desktop/herald/hermes-plugin"
)

// cmdBridge is `herald bridge install`: the Hermes plugin that brings
// every approval of a Hermes profile to Herald.
func cmdBridge(e *env, args []string) error {
	if len(args) == 0 || args[0] != "install" {
		return usageError{"usage: herald bridge install [--write HERMES_HOME | --export DIR] [--fallback builtin|deny] [--no-transport] [--yes]"}
	}
	fs := newFlags("bridge install", e)
	write := fs.String("write", "", "apply the steps to the Hermes profile at this `HERMES_HOME` on this machine (shows the changes first)")
	export := fs.String("export", "", "write the plugin's directory (herald/) into this `DIR`, to copy to a Hermes host")
	fallback := fs.String("fallback", "builtin", "what Hermes does when no Herald takes a request (security.approval.transport_fallback), its `MODE`: builtin (Hermes' own prompt) or deny")
	noTransport := fs.Bool("no-transport", false, "leave security.approval alone (Hermes 0.18/0.19 have no approval transports)")
	yes := fs.Bool("yes", false, "with --write: apply without asking")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	set := hermesplugin.Settings{Fallback: *fallback, NoTransport: *noTransport}
	switch {
	case *write != "" && *export != "":
		return usageError{"give --write or --export, not both"}
	case *export != "":
		return exportPlugin(e, *export)
	case *write != "":
		return writeProfile(e, expandHome(*write), set, *yes)
	}
	printBridgeSteps(e, set)
	return nil
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, strings.TrimPrefix(p, "~"))
		}
	}
	return p
}

func printBridgeSteps(e *env, s hermesplugin.Settings) {
	w := func(f string, a ...any) { fmt.Fprintf(e.stdout, f+"\n", a...) }
	w("Herald bridge: Herald becomes the approver for every surface of a Hermes profile")
	w("(CLI, TUI, Telegram and other chats, cron), not only the dashboard's sessions.")
	w("")
	w("On the Hermes host, for the profile at HERMES_HOME (default ~/.hermes):")
	w("")
	w("1. Put the plugin in HERMES_HOME/plugins/%s/:", hermesplugin.Name)
	w("     herald bridge install --write ~/.hermes     (Herald on the host: steps 1-3, after showing the changes)")
	w("   or from here:")
	w("     herald bridge install --export /tmp/herald-plugin")
	w("     scp -r /tmp/herald-plugin/%s HOST:.hermes/plugins/", hermesplugin.Name)
	w("2. Enable it in HERMES_HOME/config.yaml (keep the plugins already listed):")
	w("     plugins:")
	w("       enabled:")
	w("         - %s", hermesplugin.Name)
	if s.NoTransport {
		w("3. (skipped: --no-transport) Hermes 0.18/0.19 have no approval transports: Herald shows")
		w("   their approvals as notices, answered where they were asked.")
	} else {
		w("3. Hermes 0.20.1 or later: make it the approval transport, with a fallback:")
		w("     security:")
		w("       approval:")
		w("         transport: %s", hermesplugin.Name)
		w("         transport_fallback: %s", firstNonEmpty(s.Fallback, "builtin"))
		w("   With builtin, an approval that no Herald takes within 5 s (config.yaml: herald.grace_seconds)")
		w("   is asked on Hermes' own prompt, so nothing waits while this computer is off. Hermes 0.18/0.19")
		w("   have no approval transports: skip this step; Herald shows their approvals as notices.")
	}
	w("4. Restart Hermes: the dashboard, the messaging gateway and open CLI sessions (plugins load at start).")
	w("5. In Herald: follow the dashboard with its bridge, e.g. herald watch --bridge --gateway URL.")
	w("")
	w("To turn it off: set security.approval.transport back to builtin (or delete it), remove %s from", hermesplugin.Name)
	w("plugins.enabled and restart Hermes; Hermes' own prompts come back at once.")
}

func exportPlugin(e *env, dir string) error {
	dst := filepath.Join(expandHome(dir), hermesplugin.Name)
	n := 0
	err := fs.WalkDir(hermesplugin.Files(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, _ := fs.ReadFile(hermesplugin.Files(), rel)
		p := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		n++
		return os.WriteFile(p, data, 0o644)
	})
	if err != nil {
		return fmt.Errorf("cannot write the plugin to %s: %v", dst, err)
	}
	fmt.Fprintf(e.stdout, "wrote the plugin (%d files) to %s\ncopy it to HERMES_HOME/plugins/ on the Hermes host, then follow steps 2-4 of `herald bridge install`\n", n, dst)
	return nil
}

func writeProfile(e *env, home string, s hermesplugin.Settings, yes bool) error {
	p, err := hermesplugin.Prepare(home, s)
	if err != nil {
		return err
	}
	if !p.Changes() {
		fmt.Fprintf(e.stdout, "%s already has the Herald bridge installed and enabled; nothing to change\n", home)
		return nil
	}
	for _, f := range p.Files {
		fmt.Fprintf(e.stdout, "write %s\n", filepath.Join(p.PluginDir, filepath.FromSlash(f)))
	}
	if p.OldConfig != p.NewConfig {
		fmt.Fprintf(e.stdout, "change %s:\n%s", p.ConfigPath, hermesplugin.Diff(p.OldConfig, p.NewConfig))
	}
	if !yes {
		fmt.Fprintf(e.stdout, "Apply these changes? [y/N] ")
		line, _ := readLine(e)
		if e.ctx.Err() != nil {
			fmt.Fprintln(e.stdout)
			return errors.New("interrupted, nothing changed")
		}
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(e.stdout, "nothing changed")
			return nil
		}
	}
	if err := p.Apply(); err != nil {
		return fmt.Errorf("installing the bridge into %s failed: %v", home, err)
	}
	fmt.Fprintf(e.stdout, "done (the old config is in %s.before-herald). Restart Hermes: the dashboard, the messaging gateway and open CLI sessions.\n", p.ConfigPath)
	return nil
}
