package approval

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Mask replaces a secret in displayed text.
const Mask = "••••"

// maskRule masks the submatch named "s" of every match of re, when secret
// (given the submatches named "n" and "s") agrees or is nil. need lists
// lower-case literals of which every match holds at least one: a command
// holding none skips the rule (Go's regexp engine takes ~1 ms per rule on
// 20 KB, so a flood of large commands cost ~25 ms each to log).
type maskRule struct {
	re     *regexp.Regexp
	secret func(name, value string) bool
	need   []string
}

var maskRules = []maskRule{
	// https://user:password@host
	{re: regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s/:@'"]*:(?P<s>[^\s/@'"]+)@`), need: []string{"://"}},
	// Authorization: Bearer xyz, X-Api-Key: xyz (curl -H, git -c http.extraheader, ...)
	{re: regexp.MustCompile(`(?i)\b(?:(?:proxy-)?authorization|x-api-key|api-key|x-auth-token|x-access-token|private-token)\s*:\s*(?:(?:bearer|basic|token|digest)\s+)?(?P<s>[^\s'"]+)`), need: []string{"authorization", "api-key", "token"}},
	// Bearer xyz anywhere else
	{re: regexp.MustCompile(`(?i)\bbearer\s+(?P<s>[A-Za-z0-9._~+/=\-]{8,})`), need: []string{"bearer"}},
	// curl -u user:password
	{re: regexp.MustCompile(`(?:^|\s)(?:-u|--user)(?:\s+|=)[^\s:'"/]+:(?P<s>[^\s'"/][^\s'"]*)`), need: []string{"-u"}},
	// --password X, --token=X, ...
	{re: regexp.MustCompile(`(?i)(?:^|\s)--?(?:password|passwd|pass|token|secret|api-key|apikey|auth-token|access-token|client-secret)(?:\s+|=)(?P<s>"[^"]*"|'[^']*'|[^\s'"$\-][^\s'"]*)`), need: []string{"-pass", "-token", "-secret", "-api", "-auth", "-access", "-client"}},
	// -p followed by something random-looking (mysql -pXXXX); not ports or paths
	{re: regexp.MustCompile(`(?:^|\s)-p(?:\s+|=)?(?P<s>[A-Za-z0-9+/=_\-]{16,})`), secret: func(_, v string) bool { return looksRandom(v) }, need: []string{"-p"}},
	// NAME=value where NAME looks secret (env assignments, query parameters)
	{re: regexp.MustCompile(`(?:^|[^A-Za-z0-9_])(?P<n>[A-Za-z_][A-Za-z0-9_]*)=(?P<s>"[^"]*"|'[^']*'|[^\s;&|'"$](?:[^\s;&|'"]*[^\s;&|'":,.])?)`), secret: secretAssignment, need: []string{"="}},
	// well-known token shapes; the prefix stays visible
	{re: regexp.MustCompile(`\b(?:gh[pousr]_|github_pat_|glpat-|xox[abpr]-)(?P<s>[A-Za-z0-9_\-]{10,})`), need: []string{"gh", "github_pat_", "glpat-", "xox"}},
	{re: regexp.MustCompile(`\bsk-(?:proj-|ant-)?(?P<s>[A-Za-z0-9_\-]{20,})`), secret: func(_, v string) bool { return hasDigit(v) }, need: []string{"sk-"}},
	{re: regexp.MustCompile(`\b(?:AKIA|ASIA)(?P<s>[0-9A-Z]{16})\b`), need: []string{"akia", "asia"}},
	// aws_secret_access_key X, "SecretAccessKey": "X" (40 characters)
	{re: regexp.MustCompile(`(?i)secret_?access_?key["']?\s*[:=]?\s*["']?(?P<s>[A-Za-z0-9/+]{40})\b`), need: []string{"secret"}},
	// mysql -pPASS: for the mysql family an attached -p is always the password
	{re: regexp.MustCompile(`\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mariadb|mariadb-dump|mariadb-admin)\b[^|;&<>\n]*?\s-p(?P<s>[^\s'"]+)`), need: []string{"mysql", "mariadb"}},
	// sshpass -p PASS
	{re: regexp.MustCompile(`\bsshpass\s+(?:-[a-zA-Z]\s+\S+\s+)*-p\s*(?P<s>"[^"]*"|'[^']*'|[^\s'"]+)`), need: []string{"sshpass"}},
	// docker login -p PASS (and podman, buildah, skopeo, helm registry, nerdctl, oras)
	{re: regexp.MustCompile(`\b(?:docker|podman|buildah|skopeo|nerdctl|oras|helm\s+registry)\s+login\b[^|;&<>\n]*?\s-p(?:\s+|=)?(?P<s>"[^"]*"|'[^']*'|[^\s'"]+)`), need: []string{"login"}},
	// redis-cli -a PASS
	{re: regexp.MustCompile(`\bredis-cli\b[^|;&<>\n]*?\s-a\s+(?P<s>"[^"]*"|'[^']*'|[^\s'"]+)`), need: []string{"redis-cli"}},
}

// Redact masks obvious secrets in a command for display-only contexts
// (notifications, the tray, logs): values of secret-looking variables
// (GITHUB_TOKEN=...), URL passwords, authorization and cookie headers,
// password and token flags (--password, mysql -pPASS, sshpass -p, docker
// login -p, redis-cli -a), AWS secret keys and well-known token shapes
// (ghp_, github_pat_, sk-, xoxb-, AKIA...). It is a display aid, not a
// guarantee.
//
// Masking never hides anything the shell would run or interpret: a value
// holding shell syntax ($, backticks, ;, |, &, redirections, brackets,
// backslashes, quotes, # or any control or invisible character) is left
// as it is (see hidesCode), so `GITHUB_TOKEN="$(curl … | sh)"` still shows
// its code. Where the user decides (approval sheet, terminal), surfaces show
// the command unmasked anyway.
func Redact(cmd string) string {
	// (?i) also folds ſ (U+017F) to s; ToLower already maps K (U+212A).
	lower := strings.ReplaceAll(strings.ToLower(cmd), "ſ", "s")
	for _, r := range maskRules {
		if r.applies(lower) {
			cmd = r.apply(cmd)
		}
	}
	if !strings.Contains(lower, "cookie") && !strings.Contains(lower, "curl") {
		return cmd
	}
	return redactCookies(cmd)
}

// applies reports whether the rule can match the lower-cased text.
func (r maskRule) applies(lower string) bool {
	for _, w := range r.need {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return len(r.need) == 0
}

// hidesCode reports whether masking value could hide something a shell
// interprets. One pair of enclosing quotes is allowed.
func hidesCode(value string) bool {
	if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
		value = value[1 : len(value)-1]
	}
	for _, r := range value {
		if strings.ContainsRune("$`;|&<>(){}\\\"'#\n\r", r) || r < 0x20 || r == utf8.RuneError || (r >= 0x7f && needsMarker(r)) {
			return true
		}
	}
	return false
}

// hermesMasked reports whether value (one pair of enclosing quotes
// allowed) is all a mask Hermes wrote (*** or a [REDACTED …] marker):
// masking it again hides nothing more, and would hide that Hermes hid it.
func hermesMasked(value string) bool {
	if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
		value = value[1 : len(value)-1]
	}
	hs := HermesMasks(value)
	return len(hs) == 1 && hs[0].At == 0 && len(hs[0].Mask) == len(value) && hs[0].Form != MaskHeadTail
}

// cookieRE finds a Cookie header or curl's -b/--cookie option; cookieValRE
// the values after it, up to the closing quote or the end of the line.
var (
	cookieRE    = regexp.MustCompile(`(?i)(?:\b(?:set-)?cookie\s*:|\bcurl\b[^|;&<>\n]*?\s(?:-b|--cookie)(?:\s+|=))\s*(["']?)`)
	cookieValRE = regexp.MustCompile(`(?:^|;\s*)[A-Za-z0-9_.\-]+=(?P<s>[A-Za-z0-9%._~+/=:\-]+)`)
)

// redactCookies masks cookie values (a=••••; b=••••). Only values made of
// cookie characters are masked, and only up to the header's end.
func redactCookies(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range cookieRE.FindAllStringSubmatchIndex(s, -1) {
		if m[0] < last {
			continue
		}
		start := m[1]
		end := strings.IndexAny(s[start:], "\n")
		if end < 0 {
			end = len(s)
		} else {
			end += start
		}
		if q := s[m[2]:m[3]]; q != "" {
			if i := strings.Index(s[start:end], q); i >= 0 {
				end = start + i
			}
		} else if i := strings.IndexAny(s[start:end], " \t"); i >= 0 {
			end = start + i // unquoted: one word
		}
		b.WriteString(s[last:start])
		last = start
		header := s[start:end]
		for _, v := range cookieValRE.FindAllStringSubmatchIndex(header, -1) {
			vs, ve := start+v[2], start+v[3]
			if vf := s[vs:ve]; strings.Contains(vf, "=") && !strings.HasSuffix(vf, "=") {
				continue // a=b=c: unclear, leave it
			}
			b.WriteString(s[last:vs])
			b.WriteString(Mask)
			last = ve
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func (r maskRule) apply(s string) string {
	si, ni := r.re.SubexpIndex("s"), r.re.SubexpIndex("n")
	var b strings.Builder
	last := 0
	for _, m := range r.re.FindAllStringSubmatchIndex(s, -1) {
		name := ""
		if ni > 0 {
			name = s[m[2*ni]:m[2*ni+1]]
		}
		start, end := m[2*si], m[2*si+1]
		if start < last || hidesCode(s[start:end]) || hermesMasked(s[start:end]) || (r.secret != nil && !r.secret(name, s[start:end])) {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(Mask)
		last = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// Words that make a variable name secret anywhere in it, and ones that do
// only as a whole _-separated part (so MONKEY, AUTHOR and PASSENGER do not).
var (
	secretWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "API_KEY", "CREDENTIAL", "PRIVATE_KEY"}
	secretParts = []string{"KEY", "AUTH", "PASS", "PW", "PAT", "CREDS", "COOKIE"}
)

func secretAssignment(name, value string) bool {
	if value == `""` || value == "''" {
		return false
	}
	up := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	for _, p := range strings.Split(up, "_") {
		if slices.Contains(secretParts, p) {
			return true
		}
	}
	return false
}

// looksRandom: at least 16 characters, and all hex or mixed-case with digits.
func looksRandom(v string) bool {
	if len(v) < 16 {
		return false
	}
	hex := strings.Trim(v, "0123456789abcdefABCDEF") == ""
	return hex || (strings.IndexFunc(v, unicode.IsUpper) >= 0 && strings.IndexFunc(v, unicode.IsLower) >= 0 && hasDigit(v))
}

func hasDigit(v string) bool { return strings.IndexFunc(v, unicode.IsDigit) >= 0 }

// queryRE matches a URL's query string, leaving trailing punctuation.
var queryRE = regexp.MustCompile(`(?i)([a-z][a-z0-9+.\-]*://[^\s?#'"]*)\?(?:[^\s#'"]*[^\s#'":,.])?`)

// scrub makes error text fit for display and the audit log: URL query
// strings (which carry ?token=...) are dropped and secrets masked.
func scrub(s string) string { return Redact(queryRE.ReplaceAllString(s, "$1")) }
