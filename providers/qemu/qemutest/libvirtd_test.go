package qemutest

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt"
	"github.com/digitalocean/go-libvirt/socket/dialers"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestPrivateLibvirtdAnswersAndLeavesNothing starts a private libvirtd,
// asks it for its QEMU's version over its own socket, stops it, and finds
// its socket, its process and its mounts gone.
func TestPrivateLibvirtdAnswersAndLeavesNothing(t *testing.T) {
	if os.Geteuid() != 0 && os.Getenv("CI") != "true" {
		t.Skip("skipped: a private libvirtd needs root")
	}
	d, err := StartLibvirtd(t.TempDir())
	if err != nil {
		t.Fatalf("start libvirtd: %v", err)
	}
	l := libvirt.NewWithDialer(dialers.NewLocal(dialers.WithSocket(d.Socket)))
	if err := l.ConnectToURI(libvirt.QEMUSystem); err != nil {
		d.Stop()
		t.Fatalf("connect: %v", err)
	}
	v, err := l.ConnectGetVersion()
	if err != nil || v == 0 {
		t.Errorf("the hypervisor's version = %d, %v", v, err)
	}
	_ = l.Disconnect()
	pid := d.cmd.Process.Pid
	d.Stop()
	if _, err := net.DialTimeout("unix", d.Socket, time.Second); err == nil {
		t.Error("the socket still answers after Stop")
	}
	if _, err := os.Stat(filepath.Join("/proc", itoa(pid))); err == nil {
		t.Errorf("libvirtd (pid %d) still runs after Stop", pid)
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(mounts), filepath.Base(d.Dir)) || strings.Contains(string(mounts), " /run/libvirt ") {
		t.Errorf("a mount of the daemon's is left on the host:\n%s", mounts)
	}
}

func itoa(n int) string {
	var b []byte
	for n > 0 || len(b) == 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
