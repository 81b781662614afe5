package process

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
)

// A box's process inside bubblewrap has its own network namespace
// (--unshare-all, never --share-net): its loopback is its own, so nothing
// listening on the host's loopback (boxsnap's web server and API, its
// PostgreSQL, any other service there) is in its reach. A box whose
// template allows network gets outside networks through pasta (Debian's
// passt), a user-mode stack whose sockets are made on the host: it runs as
// the box's user, joined to the box's namespaces, with the gateway not
// mapped to the host (--no-map-gw) and no port forwarded from the box to
// the host (-T none -U none), so that the host's loopback stays out of
// reach. Only the box's published ports (Publish) are forwarded the other
// way, from the host's loopback into the box.

// pastaWait bounds how long a start waits for pasta to set up the box's
// network.
const pastaWait = 10 * time.Second

// maxPublish bounds how many ports a box publishes.
const maxPublish = 16

// CheckPublish refuses, in words, a published port list that is not a few
// TCP port numbers.
func CheckPublish(ports []int) error {
	if len(ports) > maxPublish {
		return &providers.RefusedError{Why: fmt.Sprintf("A box publishes at most %d ports.", maxPublish)}
	}
	for _, p := range ports {
		if p < 1 || p > 65535 {
			return &providers.RefusedError{Why: fmt.Sprintf("%d is not a TCP port (1 to 65535).", p)}
		}
	}
	return nil
}

// PastaPath is pasta's path, or "" when it is not installed (said once in
// the log: boxes then have no network). Called with b.mu held.
func (b *Processes) PastaPath() string {
	path, err := exec.LookPath("pasta")
	if err != nil {
		if !b.warnedPasta {
			b.warnedPasta = true
			b.log.Warn("passt (pasta) is not installed: box processes have no network at all, not even the outside (Debian: apt-get install passt; README, Security model)")
		}
		return ""
	}
	return path
}

// pastaArgs is pasta's command line for the network namespace on its fd 3,
// owned by the user namespace on its fd 4.
func pastaArgs(pasta string, publish []int) []string {
	tcp := "none"
	if len(publish) > 0 {
		ports := make([]string, len(publish))
		for i, p := range publish {
			ports[i] = "127.0.0.1/" + strconv.Itoa(p)
		}
		tcp = strings.Join(ports, ",")
	}
	return []string{pasta, "--config-net", "--no-map-gw", "--quiet", "--foreground", "--no-netns-quit",
		"-t", tcp, "-u", "none", "-T", "none", "-U", "none",
		"--netns", "/proc/self/fd/3", "--userns", "/proc/self/fd/4"}
}

// SandboxPid reads bwrap's --info-fd: the process inside the sandbox, in
// the box's namespaces.
func SandboxPid(info *os.File) (int, error) {
	_ = info.SetReadDeadline(time.Now().Add(pastaWait))
	var v struct {
		ChildPid int `json:"child-pid"`
	}
	if err := json.NewDecoder(info).Decode(&v); err != nil {
		return 0, fmt.Errorf("read bubblewrap's sandbox process: %w", err)
	}
	if v.ChildPid <= 0 {
		return 0, errors.New("bubblewrap named no sandbox process")
	}
	return v.ChildPid, nil
}

// StartPasta gives the namespace of the sandbox process pid its network and
// returns once the namespace has a route (pasta configured it), or an error
// if pasta ended or did not within pastaWait.
func StartPasta(pasta string, pid int, publish []int, who RunAs, log *os.File) (*exec.Cmd, error) {
	// bwrap names its sandbox process as soon as it is made, before that
	// process has set up its namespaces; pasta joins them once it has, when
	// it waits on --block-fd (its wait channel then ends in pipe_read).
	wchan := fmt.Sprintf("/proc/%d/wchan", pid)
	for deadline := time.Now().Add(pastaWait); ; time.Sleep(time.Millisecond) {
		data, err := os.ReadFile(wchan)
		if err != nil {
			return nil, fmt.Errorf("the box's sandbox process ended before its network was set up: %w", err)
		}
		if strings.HasSuffix(string(data), "pipe_read") {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the box's sandbox process was not ready for its network within %s (%s)", pastaWait, data)
		}
	}
	// The box's network namespace is owned by the user namespace bwrap
	// made first; the sandbox process itself may be in one bwrap made
	// inside it (to mount /dev/pts), whose capabilities do not reach the
	// network namespace. pasta is given both, by descriptor.
	netns, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		return nil, fmt.Errorf("open the box's network namespace: %w", err)
	}
	defer netns.Close()
	ufd, err := unix.IoctlRetInt(int(netns.Fd()), unix.NS_GET_USERNS)
	if err != nil {
		return nil, fmt.Errorf("read the owner of the box's network namespace: %w", err)
	}
	userns := os.NewFile(uintptr(ufd), "userns")
	defer userns.Close()
	args := pastaArgs(pasta, publish)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.ExtraFiles = []*os.File{netns, userns}
	cmd.Env = []string{}
	said := &headWriter{max: 512}
	cmd.Stdout, cmd.Stderr = log, io.MultiWriter(log, said)
	// As the box's user: the namespaces are that user's (bubblewrap made
	// them as it), and pasta needs no more. It ends with the boxsnap
	// process that started it, as the sandbox does (the box's command
	// runs with the same death signal): with --no-netns-quit, which a
	// namespace given by descriptor needs, nothing else would end a pasta
	// whose box was ended by another boxsnap process or died with its
	// owner. The signal is armed after the switch of user, which would
	// clear it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if who.SwitchTo {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: who.Uid, Gid: who.Gid, Groups: []uint32{}}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start pasta: %w", err)
	}
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	route := fmt.Sprintf("/proc/%d/net/route", pid)
	deadline := time.Now().Add(pastaWait)
	for pause := 200 * time.Microsecond; ; pause = min(2*pause, 10*time.Millisecond) {
		select {
		case err := <-ended:
			return nil, fmt.Errorf("pasta ended before the box's network was set up: %v: %s", err, bytes.TrimSpace(said.bytes()))
		default:
		}
		if data, err := os.ReadFile(route); err == nil && bytes.Count(data, []byte("\n")) > 1 {
			// The Wait above reaps pasta; a later kill finds it gone.
			return cmd, nil
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			return nil, fmt.Errorf("pasta did not set up the box's network within %s", pastaWait)
		}
		time.Sleep(pause)
	}
}

// EndPasta ends the box's network stack once its process has ended.
func EndPasta(p *exec.Cmd) {
	if p != nil && p.Process != nil {
		_ = p.Process.Kill()
	}
}

// headWriter keeps the first max bytes written to it.
type headWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (w *headWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := w.max - len(w.buf); room > 0 {
		w.buf = append(w.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (w *headWriter) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]byte(nil), w.buf...)
}

// WaitCommandRuns waits, up to within, until a process below the sandbox
// process pid runs something other than bwrap: the box's command. Only by
// then has every bwrap of the sandbox armed its death with its parent
// (--die-with-parent); an owner that dies sooner, right after the start it
// asked for answered, would leave the sandbox running for good. A sandbox
// that takes longer is let be (the next owner ends it, by its cgroup).
func WaitCommandRuns(pid int, within time.Duration) {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if commandBelow(pid, 0) {
			return
		}
	}
}

// commandBelow says whether a process below pid (depth levels down so
// far) runs something other than bwrap.
func commandBelow(pid, depth int) bool {
	if depth > 4 {
		return false
	}
	kids, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return false
	}
	for _, f := range strings.Fields(string(kids)) {
		kid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", kid))
		if err != nil {
			continue
		}
		if strings.TrimSpace(string(comm)) != "bwrap" || commandBelow(kid, depth+1) {
			return true
		}
	}
	return false
}
