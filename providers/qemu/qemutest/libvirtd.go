package qemutest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	startTimeout = 60 * time.Second
	stopTimeout  = 30 * time.Second
	libvirtdBin  = "/usr/sbin/libvirtd"
)

// Daemon is a private libvirtd: root's (system) daemon, since QEMU's guests
// here run as root like boxsnap itself, with every path it keeps state in
// (/etc/libvirt, /run/libvirt, /var/lib/libvirt, /var/cache/libvirt,
// /var/log/libvirt) bound over a folder of its own in a mount namespace of
// its own, and its socket in Dir. The bindings live only in that namespace,
// so they end with the daemon and nothing is left mounted on the host.
type Daemon struct {
	Dir    string
	Socket string // <Dir>/sock/libvirt-sock
	cmd    *exec.Cmd
	done   chan struct{}
}

// stateDirs are the folders of a privileged libvirtd, each bound over a
// folder of Dir.
var stateDirs = [][2]string{
	{"etc", "/etc/libvirt"},
	{"run", "/run/libvirt"},
	{"lib", "/var/lib/libvirt"},
	{"cache", "/var/cache/libvirt"},
	{"log", "/var/log/libvirt"},
}

// StartLibvirtd starts a private libvirtd in a new folder under parent and
// waits until its socket answers.
func StartLibvirtd(parent string) (*Daemon, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("a private libvirtd needs root")
	}
	if _, err := os.Stat(libvirtdBin); err != nil {
		return nil, errors.New("libvirtd is not installed (Debian: apt-get install --no-install-recommends libvirt-daemon-system libvirt-clients qemu-system-x86 qemu-utils)")
	}
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		return nil, errors.New("qemu-system-x86_64 is not installed (Debian: apt-get install --no-install-recommends qemu-system-x86)")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return nil, errors.New("util-linux's unshare is missing")
	}
	dir, err := os.MkdirTemp(parent, "bslvd-")
	if err != nil {
		return nil, err
	}
	for _, d := range append(stateDirs, [2]string{"sock"}) {
		if err := os.MkdirAll(filepath.Join(dir, d[0]), 0o700); err != nil {
			return nil, err
		}
	}
	sockDir := filepath.Join(dir, "sock")
	conf := fmt.Sprintf(`unix_sock_dir = %q
unix_sock_group = "root"
unix_sock_rw_perms = "0700"
unix_sock_ro_perms = "0700"
auth_unix_rw = "none"
auth_unix_ro = "none"
log_outputs = "3:file:%s"
`, sockDir, filepath.Join(dir, "libvirtd.log"))
	// Guests run as root with no confinement, no cgroups and no private
	// /dev: the daemon is a test's, on a host that has none of those set up
	// for it; the console logs go straight to files (no virtlogd).
	qconf := `user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
cgroup_controllers = [ ]
namespaces = [ ]
stdio_handler = "file"
`
	if err := os.WriteFile(filepath.Join(dir, "etc", "libvirtd.conf"), []byte(conf), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "etc", "qemu.conf"), []byte(qconf), 0o600); err != nil {
		return nil, err
	}
	d := &Daemon{Dir: dir, Socket: filepath.Join(sockDir, "libvirt-sock")}
	if err := d.start(); err != nil {
		return nil, err
	}
	return d, nil
}

// start starts libvirtd on the daemon's folder and waits until its socket
// answers.
func (d *Daemon) start() error {
	var script strings.Builder
	script.WriteString("set -e\n")
	for _, sd := range stateDirs {
		fmt.Fprintf(&script, "mkdir -p %s && mount --bind %s %s\n", sd[1], filepath.Join(d.Dir, sd[0]), sd[1])
	}
	fmt.Fprintf(&script, "exec %s --config /etc/libvirt/libvirtd.conf --pid-file %s\n", libvirtdBin, filepath.Join(d.Dir, "libvirtd.pid"))
	logf, err := os.OpenFile(filepath.Join(d.Dir, "libvirtd.out"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", script.String())
	cmd.Stdout, cmd.Stderr = logf, logf
	// The daemon dies with the test binary, even one killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return fmt.Errorf("start libvirtd: %w", err)
	}
	done := make(chan struct{})
	d.cmd, d.done = cmd, done
	go func() { _ = cmd.Wait(); _ = logf.Close(); close(done) }()
	deadline := time.Now().Add(startTimeout)
	for {
		c, err := net.DialTimeout("unix", d.Socket, time.Second)
		if err == nil {
			_ = c.Close()
			return nil
		}
		select {
		case <-done:
			out, _ := os.ReadFile(filepath.Join(d.Dir, "libvirtd.out"))
			log, _ := os.ReadFile(filepath.Join(d.Dir, "libvirtd.log"))
			return fmt.Errorf("libvirtd exited: %s %s", lastLines(string(out), 5), lastLines(string(log), 5))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			d.Stop()
			return fmt.Errorf("libvirtd did not answer in %v", startTimeout)
		}
	}
}

// Stop stops the daemon (SIGTERM, then SIGKILL), ends any QEMU it left
// running (found by the pidfiles in its run folder), and removes its folder.
func (d *Daemon) Stop() {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(stopTimeout):
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-d.done
	}
	d.killQEMUs()
	_ = os.RemoveAll(d.Dir)
}

// Reboot does to the daemon what a node's reboot does: the daemon and
// every QEMU it runs die at once (SIGKILL, as a power cut), what it kept
// under /run goes (a reboot empties it), and libvirtd starts again on the
// same configuration, domains' definitions and socket. Each domain then
// runs only if libvirt starts it by itself (its autostart flag).
func (d *Daemon) Reboot(ctx context.Context) error {
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	<-d.done
	for _, pid := range d.killQEMUs() {
		for alive(pid) {
			select {
			case <-ctx.Done():
				return fmt.Errorf("the QEMU %d outlived its kill: %w", pid, ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	run := filepath.Join(d.Dir, "run")
	if err := os.RemoveAll(run); err != nil {
		return err
	}
	if err := os.MkdirAll(run, 0o700); err != nil {
		return err
	}
	return d.start()
}

// killQEMUs kills (SIGKILL) every QEMU the daemon's run folder names in a
// pidfile, and answers their process IDs.
func (d *Daemon) killQEMUs() []int {
	var killed []int
	pids, _ := filepath.Glob(filepath.Join(d.Dir, "run", "qemu", "*.pid"))
	for _, p := range pids {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed = append(killed, pid)
		}
	}
	return killed
}

// alive reports whether the process runs: it exists and is no zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	_, rest, ok := strings.Cut(string(stat), ") ")
	return ok && !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

// Alive reports whether the daemon still runs.
func (d *Daemon) Alive(ctx context.Context) bool {
	select {
	case <-d.done:
		return false
	case <-ctx.Done():
		return false
	default:
		return true
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
