package approval

import "testing"

func TestRedact(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"env token", "GITHUB_TOKEN=ghp_abc git push", "GITHUB_TOKEN=•••• git push"},
		{"env export quoted", `export OPENAI_API_KEY="sk abc" && run`, "export OPENAI_API_KEY=•••• && run"},
		{"env several", "AWS_SECRET_ACCESS_KEY=abc DB_PASSWORD=hunter2 ./deploy", "AWS_SECRET_ACCESS_KEY=•••• DB_PASSWORD=•••• ./deploy"},
		{"env key part", "docker run -e STRIPE_KEY=rk_live_1 img", "docker run -e STRIPE_KEY=•••• img"},
		{"env auth part", "NPM_AUTH=abc npm publish", "NPM_AUTH=•••• npm publish"},
		{"env lower case", "my_passwd=abc cmd", "my_passwd=•••• cmd"},
		{"url password", "git clone https://user:pass@host/repo.git", "git clone https://user:••••@host/repo.git"},
		{"url password ws", "wscat -c wss://bob:s3cr3t@gw.example:9119/api/ws", "wscat -c wss://bob:••••@gw.example:9119/api/ws"},
		{"query token", "curl https://gw/api/ws?token=abc123&x=1", "curl https://gw/api/ws?token=••••&x=1"},
		{"curl bearer", `curl -H "Authorization: Bearer eyJhbGciOi.xyz" https://api`, `curl -H "Authorization: Bearer ••••" https://api`},
		{"curl basic single quotes", `curl -H 'authorization: Basic dXNlcjpwdw==' https://api`, `curl -H 'authorization: Basic ••••' https://api`},
		{"api key header", `curl --header "X-Api-Key: 12345abcde" https://api`, `curl --header "X-Api-Key: ••••" https://api`},
		{"bearer elsewhere", "http GET api Bearer abcdefgh12345", "http GET api Bearer ••••"},
		{"curl -u", "curl -u admin:hunter2 https://api", "curl -u admin:•••• https://api"},
		{"password flag", "mysql --password hunter2 db", "mysql --password •••• db"},
		{"token flag equals", "gh auth login --token=abc", "gh auth login --token=••••"},
		{"mysql -p attached", "mysql -u root -pS3cr3tPassw0rd12345 db", "mysql -u root -p•••• db"},
		{"-p hex", "openssl enc -p 0123456789abcdef0123456789abcdef", "openssl enc -p ••••"},
		{"ghp shape", "git remote set-url origin https://ghp_0123456789abcdefABCDEF0123456789abcd@github.com/o/r", "git remote set-url origin https://ghp_••••@github.com/o/r"},
		{"github_pat", "echo github_pat_11ABCDEFG0123456789_abcdefghij", "echo github_pat_••••"},
		{"gho shape", "use gho_abcdefghij0123456789", "use gho_••••"},
		{"openai", "curl -d key=x sk-proj-abcdefghij0123456789KLMNOP", "curl -d key=•••• sk-proj-••••"},
		{"slack", "notify xoxb-1234567890-abcdefghij", "notify xoxb-••••"},
		{"aws key id", "aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE", "aws configure set aws_access_key_id AKIA••••"},

		// Things that must stay as they are.
		{"plain", "git reset --hard HEAD", "git reset --hard HEAD"},
		{"rm", "rm -rf ./build", "rm -rf ./build"},
		{"path var", "PATH=/usr/local/bin:$PATH make", "PATH=/usr/local/bin:$PATH make"},
		{"author", "GIT_AUTHOR_NAME=alice git commit", "GIT_AUTHOR_NAME=alice git commit"},
		{"keyboard", "KEYBOARD=us MONKEY=1 PASSENGER=2 cmd", "KEYBOARD=us MONKEY=1 PASSENGER=2 cmd"},
		{"token reference", "GITHUB_TOKEN=$GH_TOKEN git push", "GITHUB_TOKEN=$GH_TOKEN git push"},
		{"empty value", `TOKEN="" cmd`, `TOKEN="" cmd`},
		{"port in url", "curl https://example.com:8443/path", "curl https://example.com:8443/path"},
		{"user without password", "git clone https://git@example.com/r.git", "git clone https://git@example.com/r.git"},
		{"ssh port", "ssh -p 2222 host", "ssh -p 2222 host"},
		{"mkdir -p", "mkdir -p build/output-directory-long-name", "mkdir -p build/output-directory-long-name"},
		{"docker -p", "docker run -p 8080:80 nginx", "docker run -p 8080:80 nginx"},
		{"short hex", "git checkout a1b2c3d4", "git checkout a1b2c3d4"},
		{"sk- word", "pip install sk-learn-extras-for-everyone", "pip install sk-learn-extras-for-everyone"},
		{"password file flag", "mysql --password-file /etc/pw db", "mysql --password-file /etc/pw db"},
		{"grep password", `grep -rn "password" .`, `grep -rn "password" .`},
		{"password flag ref", "cli --password $PW", "cli --password $PW"},
		{"authorization word", "echo authorization required", "echo authorization required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestDisplayCommandKeepsCommand(t *testing.T) {
	t.Parallel()
	r := Request{Command: "GITHUB_TOKEN=ghp_abc git push\x1b[2K"}
	if r.MaskedCommand() != "GITHUB_TOKEN=•••• git push␛[2K" || r.Command != "GITHUB_TOKEN=ghp_abc git push\x1b[2K" {
		t.Fatalf("MaskedCommand %q, Command %q", r.MaskedCommand(), r.Command)
	}
	// Where the user decides, the command is shown as it runs.
	if r.DisplayCommand() != "GITHUB_TOKEN=ghp_abc git push␛[2K" {
		t.Fatalf("DisplayCommand %q", r.DisplayCommand())
	}
}

func TestScrub(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"dial wss://gw:9119/api/ws?token=abc123: connection refused", "dial wss://gw:9119/api/ws: connection refused"},
		{`Get "https://gw/api/status?ticket=t&x=1": EOF`, `Get "https://gw/api/status": EOF`},
		{"write /api/ws?token=abc: broken pipe", "write /api/ws?token=••••: broken pipe"},
		{"not connected to the gateway", "not connected to the gateway"},
	}
	for _, tt := range tests {
		if got := scrub(tt.in); got != tt.want {
			t.Errorf("scrub(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
