package docker_test

import (
	"path/filepath"
	"testing"

	"github.com/boxsnap/boxsnap/providers/docker"
)

// TestOneHostOnlyOnAUnixSocket: a Docker backend is one host's
// (providers.OneHost: its boxes owned by the host that made them) on an
// engine on this host's unix socket, and every host's over tcp:// or
// ssh://, which every host may reach alike. It calls no engine.
func TestOneHostOnlyOnAUnixSocket(t *testing.T) {
	t.Parallel()
	pki := t.TempDir()
	writePKI(t, pki)
	for _, c := range []struct {
		cfg  docker.Config
		want bool
	}{
		{docker.Config{ID: "d", Install: install, Host: "unix:///var/run/docker.sock"}, true},
		{docker.Config{ID: "d", Install: install, Host: "ssh://tester@box.example:2222", SSHCommand: "/bin/true"}, false},
		{docker.Config{ID: "d", Install: install, Host: "tcp://10.0.0.2:2376", TLSCACert: filepath.Join(pki, "ca.pem"),
			TLSCert: filepath.Join(pki, "client.pem"), TLSKey: filepath.Join(pki, "client-key.pem")}, false},
	} {
		b, err := docker.New(c.cfg)
		if err != nil {
			t.Fatalf("New(%s): %v", c.cfg.Host, err)
		}
		if got := b.OneHost(); got != c.want {
			t.Errorf("a backend on %s: OneHost() = %v, want %v", c.cfg.Host, got, c.want)
		}
		_ = b.Close()
	}
}
