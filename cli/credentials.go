package cli

import (
	"bufio"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/service"
)

// secretsHelp is said in every -h that takes a secret; it names the
// secret flags and variables of fs's transports.
func secretsHelp(secrets []secretFlag) string {
	var flags, envs, files []string
	for _, f := range secrets {
		flags = append(flags, "--"+f.mode.Flag)
		envs = append(envs, f.mode.Env)
		files = append(files, "--"+f.mode.Flag+"-file PATH")
	}
	return wrap(fmt.Sprintf(`Secrets given as flags (%s) are visible to every local user in ps and /proc while Herald runs: prefer the environment (%s) or a file (%s; "-" reads one line from standard input). Herald refuses to send a secret over plain http:// or ws:// to a host other than this machine (anyone on the way can read it): use https://, an SSH tunnel to 127.0.0.1, or --allow-insecure to accept it.`,
		strings.Join(flags, ", "), strings.Join(envs, ", "), strings.Join(files, ", ")), 72)
}

// wrap breaks s into lines of at most width characters at spaces.
func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		if n > 0 && n+1+len(w) > width {
			b.WriteString("\n")
			n = 0
		} else if n > 0 {
			b.WriteString(" ")
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String() + "\n"
}

// lowerFirst lowers a name's first letter for use mid-sentence, unless
// it starts an acronym ("Session token", but "API key").
func lowerFirst(s string) string { return source.MidSentence(s) }

// secretFlag is one secret's flag, file flag and environment variable,
// as a transport's sign-in mode names them.
type secretFlag struct {
	mode        source.AuthMode
	value, file *string
}

// The user name of a sign-in that asks for one (source.AuthMode.Username).
const userFlag, userEnv = "username", "HERALD_USERNAME"

// credFlags are the credential flags of a command that dials gateways:
// one secret flag per sign-in mode the registered transports name
// (source.AuthMode.Flag), shared between transports that name the same.
type credFlags struct {
	secrets       []secretFlag
	user          *string
	allowInsecure *bool
	caFile        *string
}

func addCredFlags(fs *flag.FlagSet) *credFlags {
	c := &credFlags{}
	seen := map[string]bool{}
	for _, d := range source.Drivers() {
		for _, m := range d.Auth {
			if m.Flag == "" || seen[m.Flag] {
				continue
			}
			seen[m.Flag] = true
			what := lowerFirst(m.Label)
			c.secrets = append(c.secrets, secretFlag{
				mode:  m,
				value: fs.String(m.Flag, "", fmt.Sprintf("%s, for the %s (default $%s; visible in ps: prefer --%s-file)", what, lowerFirst(d.Title), m.Env, m.Flag)),
				file:  fs.String(m.Flag+"-file", "", fmt.Sprintf(`read the %s from this file ("-": one line from stdin)`, what)),
			})
		}
	}
	c.user = fs.String(userFlag, "", "user name for gated gateways (default $"+userEnv+")")
	c.allowInsecure = fs.Bool("allow-insecure", false, "send secrets over plain http:// to a host other than this machine (readable on the network)")
	c.caFile = fs.String("ca-file", "", "trust the CA certificates (PEM) in this file for https:// and wss:// instead of the system's (or set SSL_CERT_FILE)")
	usage := fs.Usage
	fs.Usage = func() {
		if usage != nil {
			usage()
		} else {
			fs.PrintDefaults()
		}
		fmt.Fprint(fs.Output(), "\n"+secretsHelp(c.secrets))
	}
	return c
}

// creds are the resolved secrets by flag name ("token": ...), and the CA
// roots of --ca-file (nil: the system's, which SSL_CERT_FILE can name).
type creds struct {
	byFlag map[string]string
	user   string
	roots  *x509.CertPool
}

// secrets are the credentials a transport of kind takes, by its auth
// mode names ("" is the default transport).
func (c creds) secrets(kind source.Kind) map[string]string {
	out := map[string]string{}
	d, err := source.Lookup(string(kind))
	if err != nil {
		return out
	}
	for _, m := range d.Auth {
		if v := c.byFlag[m.Flag]; m.Flag != "" && v != "" {
			out[m.Name] = v
		}
	}
	return out
}

// secret is every secret a transport of kind would send, joined (for
// checkURL, which needs to know only whether there is one).
func (c creds) secret(kind source.Kind) string {
	var all strings.Builder
	for _, v := range c.secrets(kind) {
		all.WriteString(v)
	}
	return all.String()
}

// resolve reads the secrets from flags, files or stdin, then the
// environment. stdin is read at most once; the reader to use for stdin
// afterwards is returned (it may hold what followed the secret).
func (c *credFlags) resolve(e *env) (creds, io.Reader, error) {
	out := creds{byFlag: map[string]string{}}
	stdin := e.stdin
	var br *bufio.Reader
	usedStdin := ""
	read := func(flagName, path string) (string, error) {
		if path == "-" {
			if usedStdin != "" {
				return "", usageError{fmt.Sprintf("--%s and --%s both read stdin; give one of them a file", usedStdin, flagName)}
			}
			usedStdin = flagName
			if br == nil {
				br = bufio.NewReader(e.stdin)
				stdin = br
			}
			line, err := br.ReadString('\n')
			if err != nil && !(errors.Is(err, io.EOF) && line != "") {
				return "", fmt.Errorf("--%s -: no line on standard input to read the secret from", flagName)
			}
			return strings.TrimRight(line, "\r\n"), nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("--%s: cannot read %s: %v", flagName, path, errors.Unwrap(err))
		}
		s := strings.TrimRight(string(b), "\r\n")
		if strings.ContainsAny(s, "\r\n") {
			return "", fmt.Errorf("--%s: %s holds more than one line; put only the secret in it", flagName, path)
		}
		return s, nil
	}
	for _, f := range c.secrets {
		name, fileName := f.mode.Flag, f.mode.Flag+"-file"
		switch {
		case *f.value != "" && *f.file != "":
			return out, stdin, usageError{fmt.Sprintf("give --%s or --%s, not both", name, fileName)}
		case *f.file != "":
			v, err := read(fileName, *f.file)
			if err != nil {
				return out, stdin, err
			}
			if v == "" {
				return out, stdin, fmt.Errorf("--%s %s: the secret is empty", fileName, *f.file)
			}
			out.byFlag[name] = v
		default:
			if v := firstNonEmpty(*f.value, e.getenv(f.mode.Env)); v != "" {
				out.byFlag[name] = v
			}
		}
	}
	out.user = firstNonEmpty(*c.user, e.getenv(userEnv))
	if *c.caFile != "" {
		roots, err := service.ReadCA(*c.caFile)
		if err != nil {
			return out, stdin, fmt.Errorf("--ca-file: %w", err)
		}
		out.roots = roots
	}
	return out, stdin, nil
}

// checkURL refuses a URL that does not parse (without echoing what it may
// carry) and, unless --allow-insecure, one that would send secret in
// clear text to another machine. With --allow-insecure it warns on
// stderr instead.
func (c *credFlags) checkURL(e *env, what, raw string, secret string) error {
	u, err := service.ParseURL(raw)
	if err != nil {
		var ue *url.Error
		msg := err.Error()
		if errors.As(err, &ue) {
			msg = ue.Err.Error()
		}
		return usageError{fmt.Sprintf("%s %q is not a valid URL (%s): give one like %s", what, service.RedactURL(raw), msg, exampleURL(what))}
	}
	switch h := strings.ToLower(u.Hostname()); h {
	case "http", "https", "ws", "wss": // "http//host:9119": read as a host named http
		return usageError{fmt.Sprintf("%s %q lacks the \":\" after %s: give one like %s", what, service.RedactURL(raw), h, exampleURL(what))}
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return usageError{fmt.Sprintf("%s %q has no valid port (ports are 1 to 65535): give one like %s", what, service.RedactURL(raw), exampleURL(what))}
		}
	}
	host, plain := service.PlainTextHost(raw)
	if !plain || secret == "" {
		return nil
	}
	if !*c.allowInsecure {
		return usageError{fmt.Sprintf("refusing to send a secret over plain http to %s (%s): anyone on the network path can read it; use https://, an SSH tunnel to 127.0.0.1, or --allow-insecure to send it anyway", host, service.RedactURL(raw))}
	}
	fmt.Fprintf(e.stderr, "herald: warning: sending a secret over plain http to %s (--allow-insecure): anyone on the network path can read it\n", host)
	return nil
}

// exampleURL is an address of the kind the flag named by what takes: its
// driver's default address.
func exampleURL(what string) string {
	for _, d := range source.Drivers() {
		if d.Flag != "" && "--"+d.Flag == what && d.DefaultURL != "" {
			return d.DefaultURL
		}
	}
	return "http://127.0.0.1:9119"
}
