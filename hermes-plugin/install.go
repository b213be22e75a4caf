package hermesplugin

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Settings are what installing the bridge sets in a profile's config.yaml.
type Settings struct {
	// Fallback is security.approval.transport_fallback: builtin (Hermes'
	// own prompt when no Herald takes a request; recommended) or deny.
	Fallback string
	// NoTransport leaves security.approval alone (Hermes 0.18/0.19, which
	// have no approval transports: Herald shows their approvals as notices).
	NoTransport bool
}

// Plan is what installing the bridge into one Hermes profile changes.
type Plan struct {
	Home       string
	PluginDir  string
	ConfigPath string
	OldConfig  string
	NewConfig  string
	// Files are the plugin's files that are missing or differ, by path
	// relative to PluginDir.
	Files []string
}

// Changes reports whether applying the plan changes anything.
func (p Plan) Changes() bool { return len(p.Files) > 0 || p.OldConfig != p.NewConfig }

// Prepare reads the profile at home and computes the plan.
func Prepare(home string, s Settings) (Plan, error) {
	if s.Fallback == "" {
		s.Fallback = "builtin"
	}
	if s.Fallback != "builtin" && s.Fallback != "deny" {
		return Plan{}, fmt.Errorf("the fallback is builtin (Hermes' own prompt when Herald does not take a request) or deny, not %q", s.Fallback)
	}
	fi, err := os.Stat(home)
	if err != nil || !fi.IsDir() {
		return Plan{}, fmt.Errorf("%s is not a Hermes home (HERMES_HOME): no such directory", home)
	}
	p := Plan{Home: home, PluginDir: filepath.Join(home, "plugins", Name), ConfigPath: filepath.Join(home, "config.yaml")}
	old, err := os.ReadFile(p.ConfigPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Plan{}, fmt.Errorf("cannot read %s: %v", p.ConfigPath, err)
	}
	p.OldConfig = string(old)
	if p.NewConfig, err = EditConfig(p.OldConfig, s); err != nil {
		return Plan{}, fmt.Errorf("%s: %v; apply the steps of `herald bridge install` by hand", p.ConfigPath, err)
	}
	err = fs.WalkDir(Files(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		want, _ := fs.ReadFile(Files(), rel)
		have, rerr := os.ReadFile(filepath.Join(p.PluginDir, filepath.FromSlash(rel)))
		if rerr != nil || !bytes.Equal(have, want) {
			p.Files = append(p.Files, rel)
		}
		return nil
	})
	return p, err
}

// Apply writes the plugin's files and the new config.yaml (atomically,
// keeping its mode; the old one is kept as config.yaml.before-herald).
func (p Plan) Apply() error {
	for _, rel := range p.Files {
		data, _ := fs.ReadFile(Files(), rel)
		dst := filepath.Join(p.PluginDir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := writeAtomic(dst, data, 0o644); err != nil {
			return err
		}
	}
	if p.OldConfig == p.NewConfig {
		return nil
	}
	mode := os.FileMode(0o600)
	if fi, err := os.Stat(p.ConfigPath); err == nil {
		mode = fi.Mode().Perm()
		if err := writeAtomic(p.ConfigPath+".before-herald", []byte(p.OldConfig), mode); err != nil {
			return err
		}
	}
	return writeAtomic(p.ConfigPath, []byte(p.NewConfig), mode)
}

func writeAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// EditConfig returns config.yaml's text with plugins.enabled holding
// herald and (unless s.NoTransport) security.approval.transport: herald
// and transport_fallback set. It edits block-style YAML line by line and
// keeps everything else as it was; a form it cannot edit safely (flow
// mappings, anchors) is refused with an error.
func EditConfig(src string, s Settings) (string, error) {
	if s.Fallback == "" {
		s.Fallback = "builtin"
	}
	lines := splitLines(src)
	var err error
	if lines, err = ensureListItem(lines, "plugins", "enabled", Name); err != nil {
		return "", err
	}
	if !s.NoTransport {
		if lines, err = ensureScalar(lines, []string{"security", "approval", "transport"}, Name); err != nil {
			return "", err
		}
		if lines, err = ensureScalar(lines, []string{"security", "approval", "transport_fallback"}, s.Fallback); err != nil {
			return "", err
		}
	}
	out := strings.Join(lines, "\n")
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out, nil
}

func splitLines(src string) []string {
	src = strings.TrimRight(src, "\n")
	if src == "" {
		return nil
	}
	return strings.Split(src, "\n")
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

func ignorable(l string) bool {
	t := strings.TrimSpace(l)
	return t == "" || strings.HasPrefix(t, "#")
}

// keyValue splits "  key: value # c" at indent into key and value ("" for
// a block); ok is false when the line is not a plain key.
func keyValue(l string) (key, value string, ok bool) {
	t := strings.TrimSpace(l)
	i := strings.Index(t, ":")
	if i <= 0 || strings.HasPrefix(t, "- ") || strings.ContainsAny(t[:i], " \"'{[&*!") {
		return "", "", false
	}
	rest := t[i+1:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", "", false
	}
	value = strings.TrimSpace(rest)
	if j := strings.Index(value, " #"); j >= 0 {
		value = strings.TrimSpace(value[:j])
	}
	if strings.HasPrefix(value, "#") {
		value = ""
	}
	return t[:i], value, true
}

// blockEnd is the index after the last line of the block that starts at i.
func blockEnd(lines []string, i int) int {
	in := indentOf(lines[i])
	j := i + 1
	for ; j < len(lines); j++ {
		if ignorable(lines[j]) {
			continue
		}
		if indentOf(lines[j]) <= in && !(strings.HasPrefix(strings.TrimSpace(lines[j]), "- ") && indentOf(lines[j]) == in && in > 0) {
			break
		}
	}
	// Trailing blank or comment lines belong to what follows.
	for j > i+1 && ignorable(lines[j-1]) {
		j--
	}
	return j
}

// findKey finds key directly inside [from, to) at indent in.
func findKey(lines []string, from, to, in int, key string) int {
	for i := from; i < to; i++ {
		if ignorable(lines[i]) || indentOf(lines[i]) != in {
			continue
		}
		if k, _, ok := keyValue(lines[i]); ok && k == key {
			return i
		}
	}
	return -1
}

// childIndent is the indent of the first entry inside the block at i.
func childIndent(lines []string, i, end int) int {
	for j := i + 1; j < end; j++ {
		if !ignorable(lines[j]) && !strings.HasPrefix(strings.TrimSpace(lines[j]), "- ") {
			return indentOf(lines[j])
		}
	}
	return indentOf(lines[i]) + 2
}

func insert(lines []string, at int, add ...string) []string {
	out := append([]string{}, lines[:at]...)
	out = append(out, add...)
	return append(out, lines[at:]...)
}

// openMapping finds (or appends) the mapping key at indent in within
// [from, to) and returns its line; an inline empty mapping is opened.
func openMapping(lines []string, from, to, in int, key string) ([]string, int, error) {
	i := findKey(lines, from, to, in, key)
	if i < 0 {
		lines = insert(lines, to, strings.Repeat(" ", in)+key+":")
		return lines, to, nil
	}
	_, v, _ := keyValue(lines[i])
	switch v {
	case "":
	case "{}", "null", "~":
		lines[i] = strings.Repeat(" ", in) + key + ":"
	default:
		return nil, 0, fmt.Errorf("%s is written in a form this installer does not edit (%s)", key, strings.TrimSpace(lines[i]))
	}
	return lines, i, nil
}

func ensureScalar(lines []string, path []string, value string) ([]string, error) {
	from, to, in := 0, len(lines), 0
	var err error
	for _, key := range path[:len(path)-1] {
		var i int
		if lines, i, err = openMapping(lines, from, to, in, key); err != nil {
			return nil, err
		}
		end := blockEnd(lines, i)
		from, to, in = i+1, end, childIndent(lines, i, end)
	}
	leaf := path[len(path)-1]
	want := strings.Repeat(" ", in) + leaf + ": " + value
	if i := findKey(lines, from, to, in, leaf); i >= 0 {
		if _, v, _ := keyValue(lines[i]); v == value {
			return lines, nil
		}
		lines[i] = want
		return lines, nil
	}
	return insert(lines, to, want), nil
}

func ensureListItem(lines []string, mapKey, listKey, item string) ([]string, error) {
	lines, p, err := openMapping(lines, 0, len(lines), 0, mapKey)
	if err != nil {
		return nil, err
	}
	end := blockEnd(lines, p)
	ci := childIndent(lines, p, end)
	e := findKey(lines, p+1, end, ci, listKey)
	if e < 0 {
		return insert(lines, end, strings.Repeat(" ", ci)+listKey+":", strings.Repeat(" ", ci+2)+"- "+item), nil
	}
	_, v, _ := keyValue(lines[e])
	switch {
	case v == "":
		lend := blockEnd(lines, e)
		last, itemIndent := -1, ci+2
		for j := e + 1; j < lend; j++ {
			t := strings.TrimSpace(lines[j])
			if !strings.HasPrefix(t, "- ") && t != "-" {
				continue
			}
			if unquote(strings.TrimSpace(strings.TrimPrefix(t, "-"))) == item {
				return lines, nil
			}
			last, itemIndent = j, indentOf(lines[j])
		}
		at := e + 1
		if last >= 0 {
			at = last + 1
		}
		return insert(lines, at, strings.Repeat(" ", itemIndent)+"- "+item), nil
	case v == "null" || v == "~":
		lines[e] = strings.Repeat(" ", ci) + listKey + ": [" + item + "]"
		return lines, nil
	case strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]"):
		var items []string
		for _, x := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(v, "["), "]"), ",") {
			if x = strings.TrimSpace(x); x != "" {
				if unquote(x) == item {
					return lines, nil
				}
				items = append(items, x)
			}
		}
		items = append(items, item)
		lines[e] = strings.Repeat(" ", ci) + listKey + ": [" + strings.Join(items, ", ") + "]"
		return lines, nil
	}
	return nil, fmt.Errorf("%s.%s is written in a form this installer does not edit (%s)", mapKey, listKey, strings.TrimSpace(lines[e]))
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

// Diff is a line diff of old and new ("-"/"+"/" " prefixed), for showing
// what Apply changes.
func Diff(old, new string) string {
	a, b := splitLines(old), splitLines(new)
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var sb strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			sb.WriteString("  " + a[i] + "\n")
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			sb.WriteString("+ " + b[j] + "\n")
			j++
		default:
			sb.WriteString("- " + a[i] + "\n")
			i++
		}
	}
	return sb.String()
}
