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
	"strings"

	"github.com/herald-desktop/herald/service"
)

// secretsHelp is said in every -h that takes a secret.
const secretsHelp = `Secrets given as flags (--token, --password, --api-key) are visible to
every local user in ps and /proc while Herald runs: prefer the environment
(HERALD_TOKEN, HERALD_PASSWORD, HERALD_API_KEY) or a file (--token-file
PATH, --password-file PATH, --api-key-file PATH; "-" reads one line from
standard input). Herald refuses to send a secret over plain http:// or
ws:// to a host other than this machine (anyone on the way can read it):
use https://, an SSH tunnel to 127.0.0.1, or --allow-insecure to accept it.
`

// credFlags are the credential flags of a command that dials gateways.
type credFlags struct {
	token, user, pass, apiKey       *string
	tokenFile, passFile, apiKeyFile *string
	allowInsecure                   *bool
	caFile                          *string
}

func addCredFlags(fs *flag.FlagSet) *credFlags {
	c := &credFlags{
		token:         fs.String("token", "", "session token for loopback gateways (default $HERALD_TOKEN; visible in ps: prefer --token-file)"),
		user:          fs.String("username", "", "user name for gated gateways (default $HERALD_USERNAME)"),
		pass:          fs.String("password", "", "password for gated gateways (default $HERALD_PASSWORD; visible in ps: prefer --password-file)"),
		apiKey:        fs.String("api-key", "", "API server key (default $HERALD_API_KEY; visible in ps: prefer --api-key-file)"),
		tokenFile:     fs.String("token-file", "", `read the session token from this file ("-": one line from stdin)`),
		passFile:      fs.String("password-file", "", `read the password from this file ("-": one line from stdin)`),
		apiKeyFile:    fs.String("api-key-file", "", `read the API server key from this file ("-": one line from stdin)`),
		allowInsecure: fs.Bool("allow-insecure", false, "send secrets over plain http:// to a host other than this machine (readable on the network)"),
		caFile:        fs.String("ca-file", "", "trust the CA certificates (PEM) in this file for https:// and wss:// instead of the system's (or set SSL_CERT_FILE)"),
	}
	usage := fs.Usage
	fs.Usage = func() {
		if usage != nil {
			usage()
		} else {
			fs.PrintDefaults()
		}
		fmt.Fprint(fs.Output(), "\n"+secretsHelp)
	}
	return c
}

// creds are the resolved secrets, and the CA roots of --ca-file (nil:
// the system's, which SSL_CERT_FILE can name).
type creds struct {
	token, user, pass, apiKey string
	roots                     *x509.CertPool
}

// secrets are the credentials by the drivers' auth mode names.
func (c creds) secrets() map[string]string {
	return map[string]string{"token": c.token, "password": c.pass, "key": c.apiKey}
}

// resolve reads the secrets from flags, files or stdin, then the
// environment. stdin is read at most once; the reader to use for stdin
// afterwards is returned (it may hold what followed the secret).
func (c *credFlags) resolve(e *env) (creds, io.Reader, error) {
	var out creds
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
	for _, f := range []struct {
		name, fileName string
		value, file    *string
		env            string
		dst            *string
	}{
		{"token", "token-file", c.token, c.tokenFile, "HERALD_TOKEN", &out.token},
		{"password", "password-file", c.pass, c.passFile, "HERALD_PASSWORD", &out.pass},
		{"api-key", "api-key-file", c.apiKey, c.apiKeyFile, "HERALD_API_KEY", &out.apiKey},
	} {
		switch {
		case *f.value != "" && *f.file != "":
			return out, stdin, usageError{fmt.Sprintf("give --%s or --%s, not both", f.name, f.fileName)}
		case *f.file != "":
			v, err := read(f.fileName, *f.file)
			if err != nil {
				return out, stdin, err
			}
			if v == "" {
				return out, stdin, fmt.Errorf("--%s %s: the secret is empty", f.fileName, *f.file)
			}
			*f.dst = v
		default:
			*f.dst = firstNonEmpty(*f.value, e.getenv(f.env))
		}
	}
	out.user = firstNonEmpty(*c.user, e.getenv("HERALD_USERNAME"))
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
	if _, err := service.ParseURL(raw); err != nil {
		var ue *url.Error
		msg := err.Error()
		if errors.As(err, &ue) {
			msg = ue.Err.Error()
		}
		return usageError{fmt.Sprintf("%s %s is not a valid URL: %s", what, service.RedactURL(raw), msg)}
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
