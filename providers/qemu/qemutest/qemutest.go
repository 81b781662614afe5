// Package qemutest starts one private libvirtd per test binary, as
// providers/docker/dockertest does for dockerd (its state folders, socket
// and pidfile under a temporary folder, stopped after the tests), and builds
// the guest the QEMU backend's tests boot from Debian's packages, cached
// under the repository's .cache folder so later runs do not build it again.
//
// Where libvirtd or QEMU cannot run (not root, not installed), the tests
// that ask for them skip with the reason, except under CI (CI=true), where
// they fail.
package qemutest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

type suite struct {
	once   sync.Once
	d      *Daemon
	err    error
	guest  sync.Once
	files  GuestFiles
	gueErr error
}

// current is this test binary's daemon, started by the first test that asks
// and stopped by Main.
var current atomic.Pointer[suite]

func init() { current.Store(&suite{}) }

// Main runs the tests and then stops the daemon, if a test started one. Use
// it as os.Exit(qemutest.Main(m)) in TestMain.
func Main(m interface{ Run() int }) int {
	code := m.Run()
	if s := current.Load(); s.d != nil {
		s.d.Stop()
	}
	return code
}

// Libvirtd starts the test binary's libvirtd on first use and answers it.
// It skips the test where libvirtd cannot run, or fails it under CI.
func Libvirtd(t testing.TB) *Daemon {
	t.Helper()
	s := current.Load()
	s.once.Do(func() { s.d, s.err = StartLibvirtd(os.TempDir()) })
	if s.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("a private libvirtd is needed and did not start: %v", s.err)
		}
		t.Skipf("skipped: a private libvirtd could not start (%v); run as root with Debian's libvirt-daemon-system and qemu-system-x86 installed (make test installs them)", s.err)
	}
	return s.d
}

// OwnLibvirtd starts a libvirtd of the test's own, for a test that harms
// the daemon itself (Reboot), stopped at the test's end. It skips the test
// where libvirtd cannot run, or fails it under CI.
func OwnLibvirtd(t testing.TB) *Daemon {
	t.Helper()
	d, err := StartLibvirtd(os.TempDir())
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("a libvirtd of the test's own is needed and did not start: %v", err)
		}
		t.Skipf("skipped: a libvirtd of the test's own could not start (%v); run as root with Debian's libvirt-daemon-system and qemu-system-x86 installed (make test installs them)", err)
	}
	t.Cleanup(d.Stop)
	return d
}

// Guest builds the test guest once per test binary (or finds it in the
// cache) and answers its files.
func Guest(t testing.TB) GuestFiles {
	t.Helper()
	s := current.Load()
	s.guest.Do(func() {
		cache, err := CacheDir()
		if err != nil {
			s.gueErr = err
			return
		}
		s.files, s.gueErr = BuildGuest(context.Background(), cache)
	})
	if s.gueErr != nil {
		t.Fatalf("build the test guest: %v", s.gueErr)
	}
	return s.files
}

// CacheDir is the repository's .cache folder, found from the working
// folder up to go.mod.
func CacheDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, ".cache"), nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the working folder")
		}
		dir = up
	}
}
