// Package dockertest starts one private Docker daemon per test binary, as
// app/dbtest does for PostgreSQL: its own data root, exec root, pidfile and
// unix socket under a temporary folder, no bridge and no iptables, stopped
// after the tests. Images come from the project, never a registry: Image
// imports one from Debian's static busybox.
//
// Where dockerd cannot start (not root, not installed), the tests that ask
// for it skip with the reason, except under CI (CI=true), where they fail.
package dockertest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers/docker"
)

// TestImage is the image Image makes: a static busybox whose command is the
// identity reset, labelled with its version (so its snapshots fork).
const TestImage = "boxsnap-test/busybox:1"

// Busybox is where Debian's busybox-static puts its binary.
const Busybox = "/bin/busybox"

const (
	startTimeout = 60 * time.Second
	stopTimeout  = 30 * time.Second
)

// Daemon is a private dockerd.
type Daemon struct {
	Dir  string
	Host string // unix://<Dir>/docker.sock
	cmd  *exec.Cmd
	done chan struct{}
}

type suite struct {
	once  sync.Once
	d     *Daemon
	err   error
	image sync.Once
	imErr error
}

// current is this test binary's daemon, started by the first test that asks
// and stopped by Main.
var current atomic.Pointer[suite]

func init() { current.Store(&suite{}) }

// Main runs the tests and then stops the daemon, if a test started one. Use
// it as os.Exit(dockertest.Main(m)) in TestMain; m is a *testing.M, or
// anything that runs the tests (dbtest.Main around one).
func Main(m interface{ Run() int }) int {
	code := m.Run()
	if s := current.Load(); s.d != nil {
		s.d.Stop()
	}
	return code
}

// Host starts the test binary's daemon on first use and answers its
// address. It skips the test where dockerd cannot run, or fails it under CI.
func Host(t testing.TB) string {
	t.Helper()
	if h := os.Getenv("BOXSNAP_TEST_DOCKER_HOST"); h != "" {
		return h // a worker process the test started, on the test's daemon
	}
	s := current.Load()
	s.once.Do(func() { s.d, s.err = Start(os.TempDir()) })
	if s.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("a private dockerd is needed and did not start: %v", s.err)
		}
		t.Skipf("skipped: a private dockerd could not start (%v); run as root with Debian's docker.io installed (make test installs it)", s.err)
	}
	return s.d.Host
}

// Image makes TestImage on the daemon once and answers its name.
func Image(t testing.TB, host string) string {
	t.Helper()
	s := current.Load()
	s.image.Do(func() { s.imErr = Import(context.Background(), host, TestImage, nil) })
	if s.imErr != nil {
		t.Fatalf("make the test image: %v", s.imErr)
	}
	return TestImage
}

// Import makes an image named ref from a static busybox and files, with
// the identity reset (docker.IdentityReset) as its command.
func Import(ctx context.Context, host, ref string, files map[string]string) error {
	b, err := docker.New(docker.Config{ID: "dockertest", Host: host, Install: "dockertest"})
	if err != nil {
		return err
	}
	defer func() { _ = b.Close() }()
	return b.ImportBusyboxImage(ctx, ref, Busybox, files)
}

// Start starts a private dockerd in a new folder under parent and waits
// until it answers.
func Start(parent string) (*Daemon, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("dockerd needs root")
	}
	dir, err := os.MkdirTemp(parent, "bsdkr-")
	if err != nil {
		return nil, err
	}
	return StartIn(dir)
}

// StartIn starts a private dockerd whose data root, exec root, pidfile and
// socket are in dir (a dir an earlier daemon used starts it again, with its
// containers, images and volumes).
func StartIn(dir string) (*Daemon, error) { return StartWith(dir) }

// StartWith starts a private dockerd in dir as StartIn does, with more of
// dockerd's arguments (a tcp:// listener with TLS, say); Host stays its
// unix socket.
func StartWith(dir string, extra ...string) (*Daemon, error) {
	bin, err := exec.LookPath("dockerd")
	if err != nil {
		return nil, errors.New("dockerd is not installed (Debian: apt-get install docker.io)")
	}
	sock := filepath.Join(dir, "docker.sock")
	logf, err := os.Create(filepath.Join(dir, "dockerd.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--data-root", filepath.Join(dir, "data"), "--exec-root", filepath.Join(dir, "exec"),
		"--pidfile", filepath.Join(dir, "docker.pid"), "--host", "unix://"+sock,
		"--bridge", "none", "--iptables=false", "--ip-masq=false", "--ip6tables=false")
	cmd.Args = append(cmd.Args, extra...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// The daemon dies with the test binary, even one killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("start dockerd: %w", err)
	}
	d := &Daemon{Dir: dir, Host: "unix://" + sock, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); _ = logf.Close(); close(d.done) }()
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	deadline := time.Now().Add(startTimeout)
	for {
		resp, err := hc.Get("http://docker/_ping")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return d, nil
			}
		}
		select {
		case <-d.done:
			log, _ := os.ReadFile(filepath.Join(dir, "dockerd.log"))
			return nil, fmt.Errorf("dockerd exited: %s", lastLines(string(log), 5))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			d.Stop()
			return nil, fmt.Errorf("dockerd did not answer in %v", startTimeout)
		}
	}
}

// Stop stops the daemon (SIGTERM, then SIGKILL) and removes its folder.
func (d *Daemon) Stop() {
	d.Halt()
	_ = os.RemoveAll(d.Dir)
}

// Halt stops the daemon and keeps its folder, for StartIn.
func (d *Daemon) Halt() {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(stopTimeout):
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-d.done
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
