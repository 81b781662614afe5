package config

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func load(t *testing.T, env map[string]string, args ...string) (Config, error) {
	t.Helper()
	c, _, err := Load("serve", args, func(k string) string { return env[k] }, io.Discard)
	return c, err
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	c, err := load(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8080" || !c.Workers || c.ShutdownTimeout != 30*time.Second || c.DatabaseURL != "" {
		t.Fatalf("defaults: %+v", c)
	}
	if !filepath.IsAbs(c.DataDir) || c.LocalRoot != filepath.Join(c.DataDir, "local") {
		t.Fatalf("data dir %q, local root %q", c.DataDir, c.LocalRoot)
	}
	if c.BaseURL != "http://127.0.0.1:8080" {
		t.Fatalf("base URL %q", c.BaseURL)
	}
}

func TestFlagsWinOverEnv(t *testing.T) {
	t.Parallel()
	c, err := load(t, map[string]string{"BOXSNAP_ADDR": "127.0.0.1:9000", "BOXSNAP_WORKERS": "false"}, "--addr", "127.0.0.1:9001")
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9001" || c.Workers {
		t.Fatalf("got %+v", c)
	}
}

func TestBadValuesNamed(t *testing.T) {
	t.Parallel()
	_, err := load(t, map[string]string{"BOXSNAP_WORKERS": "maybe", "BOXSNAP_LOG_FORMAT": "xml", "BOXSNAP_SHUTDOWN_TIMEOUT": "soon"}, "--addr", "nope")
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"BOXSNAP_WORKERS", "BOXSNAP_LOG_FORMAT", "BOXSNAP_SHUTDOWN_TIMEOUT", "BOXSNAP_ADDR"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %s: %v", want, err)
		}
	}
}

func TestSecretFromFile(t *testing.T) {
	t.Parallel()
	f := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(f, []byte("hunter2hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := load(t, map[string]string{"BOXSNAP_PASSWORD_FILE": f})
	if err != nil || c.Password != "hunter2hunter2" {
		t.Fatalf("password %q, %v", c.Password, err)
	}
	_, err = load(t, map[string]string{"BOXSNAP_PASSWORD_FILE": f, "BOXSNAP_PASSWORD": "x"})
	if err == nil {
		t.Fatal("both set: no error")
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"postgres://bob:s3cret@db:5432/boxsnap": "postgres://bob:xxxxx@db:5432/boxsnap",
		"host=/tmp user=bob password=s3cret":    "host=/tmp user=bob password=xxxxx",
	} {
		if got := Redact(in); got != want || strings.Contains(got, "s3cret") {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestBareBooleanFlags: every boolean flag takes the bare form (--demo
// means true), beside --demo=false and its environment variable.
func TestBareBooleanFlags(t *testing.T) {
	t.Parallel()
	c, err := load(t, map[string]string{"BOXSNAP_WORKERS": "false"}, "--demo", "--addr", "127.0.0.1:9002", "--workers",
		"--proxmox-insecure-skip-tls-verify", "--proxmox-zfs-order-live-checks-only", "--docker-boxes-go-with-host")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Demo || !c.Workers || c.Addr != "127.0.0.1:9002" || !c.ProxmoxInsecureSkipTLSVerify || !c.ProxmoxZFSOrderLiveChecksOnly || !c.DockerBoxesGoWithHost {
		t.Fatalf("bare flags: %+v", c)
	}
	c, err = load(t, map[string]string{"BOXSNAP_DEMO": "true"}, "--demo=false")
	if err != nil || c.Demo {
		t.Fatalf("--demo=false: %v %v", c.Demo, err)
	}
	if _, err := load(t, nil, "--demo=maybe"); err == nil || !strings.Contains(err.Error(), `--demo (BOXSNAP_DEMO) must be true or false, not "maybe"`) {
		t.Fatalf("--demo=maybe: %v", err)
	}
}
