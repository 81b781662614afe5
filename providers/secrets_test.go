package providers_test

import (
	"os"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
)

// TestSecretsInReadme keeps the README's list of what a copy leaves behind
// the same as providers.DefaultSecrets.
func TestSecretsInReadme(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "<!-- secrets: providers/secrets.go -->\n")
	list, _, ok2 := strings.Cut(rest, "<!-- /secrets -->")
	if !ok || !ok2 {
		t.Fatal("the README has no list of secrets")
	}
	sec := providers.DefaultSecrets()
	n := 0
	for _, p := range append(sec.Home, sec.System...) {
		n++
		if !strings.Contains(list, "`"+p+"`") {
			t.Errorf("the README does not list %s", p)
		}
	}
	if strings.Count(list, "`")/2 != n {
		t.Errorf("the README lists %d paths, DefaultSecrets %d", strings.Count(list, "`")/2, n)
	}
}

func TestRemoves(t *testing.T) {
	targets := providers.DefaultSecrets().Targets(providers.Homes([]string{"root", "home/alice", "home/alice/work", "Users/bob"}))
	for p, want := range map[string]string{
		".ssh/id_ed25519":                  ".ssh",
		"home/alice/.aws/credentials":      "home/alice/.aws/credentials",
		"home/alice/work/.aws/credentials": "",
		"Users/bob/.netrc":                 "Users/bob/.netrc",
		"etc/ssh/ssh_host_ed25519_key":     "etc/ssh/ssh_host_ed25519_key",
		"etc/ssh/sshd_config":              "",
		"root/.claude/.credentials.json":   "root/.claude/.credentials.json",
		".sshd":                            "",
		"app/.git-credentials":             "",
	} {
		if got := providers.Removes(targets, p); got != want {
			t.Errorf("Removes(%s) = %q, want %q", p, got, want)
		}
	}
}
