package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
)

// DefaultBoxUser is the unprivileged user a box's process runs as when its
// template names none and boxsnap runs as root: boxsnap makes it (useradd)
// the first time it is needed, and says so in its log.
const DefaultBoxUser = "boxsnap-box"

// The bounds of a box's process when its template sets none (README,
// "Security model"). Memory is RLIMIT_DATA (the heap and private mappings,
// per process); processes is RLIMIT_NPROC (all processes of the box's
// user); open files is RLIMIT_NOFILE (per process).
const (
	DefaultMemoryBytes = 4 << 30
	DefaultProcesses   = 512
	DefaultOpenFiles   = 1024
)

// runAs is who a box's process runs as.
type runAs struct {
	name     string
	uid, gid uint32
	// switchTo is set when boxsnap runs as root and switches to the user;
	// otherwise the process runs as boxsnap's own (unprivileged) user.
	switchTo bool
}

// boxUser resolves the user a box's process runs as: the template's, or
// DefaultBoxUser, made when missing. It never answers root. Called with
// b.mu held.
func (b *Backend) boxUser(name string) (runAs, error) {
	if os.Geteuid() != 0 {
		me, err := user.Current()
		if err != nil {
			return runAs{}, fmt.Errorf("read boxsnap's own user: %w", err)
		}
		if name != "" && name != me.Username && !b.warnedUser {
			b.warnedUser = true
			b.log.Warn("boxsnap does not run as root, so a box's process runs as boxsnap's own user, not the template's", "user", me.Username, "template_user", name)
		}
		return runAs{name: me.Username, uid: uint32(os.Geteuid()), gid: uint32(os.Getegid())}, nil
	}
	if name == "" {
		name = DefaultBoxUser
	}
	u, err := user.Lookup(name)
	var unknown user.UnknownUserError
	if errors.As(err, &unknown) && name == DefaultBoxUser {
		out, addErr := exec.Command("useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
			"--shell", "/usr/sbin/nologin", "--comment", "boxsnap's box processes", DefaultBoxUser).CombinedOutput()
		if addErr != nil {
			return runAs{}, fmt.Errorf("make the unprivileged user %s for box processes: %v: %s", DefaultBoxUser, addErr, out)
		}
		b.log.Info("made the unprivileged user that box processes run as (useradd --system)", "user", DefaultBoxUser)
		u, err = user.Lookup(name)
	}
	if errors.As(err, &unknown) {
		return runAs{}, &providers.RefusedError{Why: fmt.Sprintf("The box's user %s does not exist on this host.", name)}
	}
	if err != nil {
		return runAs{}, fmt.Errorf("look up the box's user %s: %w", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return runAs{}, fmt.Errorf("the box's user %s has no numeric IDs", name)
	}
	if uid == 0 || gid == 0 {
		return runAs{}, &providers.RefusedError{Why: fmt.Sprintf("A box's process never runs as root, and %s is root.", name)}
	}
	return runAs{name: name, uid: uint32(uid), gid: uint32(gid), switchTo: true}, nil
}

// ownBy gives the box's folder to the box's user the first time its process
// starts (a template's copy keeps the template's owners), so that the
// process can write in it and nowhere else of boxsnap's.
func ownBy(dir string, who runAs) error {
	if !who.switchTo {
		return nil
	}
	t, err := openTree(dir)
	if err != nil {
		return err
	}
	defer t.Close()
	var st unix.Stat_t
	if err := t.Lstat(".", &st); err == nil && st.Uid == who.uid {
		return nil
	}
	return chownBeneath(t, ".", who)
}

// chownBeneath gives rel and all it holds to who, each path found beneath
// t through no link, and a link's own owner set, never its target's.
func chownBeneath(t *beneath, rel string, who runAs) error {
	if err := t.Lchown(rel, int(who.uid), int(who.gid)); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := t.Lstat(rel, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return err
	}
	ents, err := readDirBeneath(t, rel)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := chownBeneath(t, path.Join(rel, e.Name()), who); err != nil {
			return err
		}
	}
	return nil
}

// sandbox says whether box processes run inside bubblewrap: bwrap is
// installed and makes a sandbox as the box's user on this host. Probed
// once, and said in the log.
func (b *Backend) sandbox(who runAs) string {
	b.bwrapOnce.Do(func() {
		path, err := exec.LookPath("bwrap")
		if err != nil {
			b.log.Warn("bubblewrap (bwrap) is not installed: box processes run as an unprivileged user with limits, but see the whole host's files that user may read and share the host's network, its loopback too (README, Security model)")
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		probe := exec.CommandContext(ctx, path, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "--", "/bin/true")
		probe.Env = []string{}
		if who.switchTo {
			probe.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: who.uid, Gid: who.gid, Groups: []uint32{}}}
		}
		if out, err := probe.CombinedOutput(); err != nil {
			b.log.Warn("bubblewrap cannot make a sandbox on this host: box processes run without it", "err", err, "output", string(out))
			return
		}
		b.bwrap = path
		b.log.Info("box processes run inside bubblewrap: only the box's folder is writable, boxsnap's own folder is hidden, and each box has its own network namespace, without the host's loopback")
	})
	return b.bwrap
}

// processArgs is the command line of a box's process: bwrap where it
// works, then prlimit setting the limits before the command runs (Go's
// SysProcAttr has no rlimits, and setting them on boxsnap itself would bound
// boxsnap), then the shell. bwrap gives the box its own network namespace;
// with waitNet, bwrap names its sandbox process on fd 3 (--info-fd) and
// waits for a byte on fd 4 (--block-fd) before it runs the command, so that
// the command starts with its network set up (network.go).
func (b *Backend) processArgs(dir, command string, lim providers.BoxLimits, who runAs, waitNet bool) ([]string, error) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		return nil, errors.New("prlimit (util-linux) is not installed: boxsnap does not start a box's process without its limits")
	}
	if lim.MemoryBytes <= 0 {
		lim.MemoryBytes = DefaultMemoryBytes
	}
	if lim.OpenFiles <= 0 {
		lim.OpenFiles = DefaultOpenFiles
	}
	var args []string
	if bw := b.sandbox(who); bw != "" {
		args = append(args, bw, "--die-with-parent", "--unshare-all",
			"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp")
		if waitNet {
			args = append(args, "--info-fd", "3", "--block-fd", "4")
		}
		// A box's command may run boxsnap itself (the demo's web app is
		// `boxsnap demo-app`); a binary built under /tmp, as a checkout or a
		// test there gives, would be hidden by the private /tmp, so it is
		// bound back, read-only, at its own path.
		if self := b.self(); self != "" && underTmp(self) && othersMayRun(self) {
			args = append(args, "--ro-bind", self, self)
		}
		args = append(args, "--tmpfs", b.root, "--bind", dir, dir, "--chdir", dir, "--")
	}
	// --fsize: no one file grows past the box's disk bound (EFBIG); the
	// whole folder is bounded by watchDisk.
	args = append(args, prlimit, fmt.Sprintf("--data=%d", lim.MemoryBytes), fmt.Sprintf("--nofile=%d", lim.OpenFiles),
		fmt.Sprintf("--fsize=%d", diskBound(lim)))
	switch {
	case lim.Processes > 0:
		args = append(args, fmt.Sprintf("--nproc=%d", lim.Processes))
	case who.switchTo:
		// Not as boxsnap's own user: its count holds boxsnap's threads too.
		args = append(args, fmt.Sprintf("--nproc=%d", DefaultProcesses))
	}
	return append(args, "--", "/bin/sh", "-c", command), nil
}

// self is boxsnap's own executable, or "" when it cannot be told.
func (b *Backend) self() string {
	if b.selfPath != "" {
		return b.selfPath
	}
	self, err := os.Executable()
	if err != nil {
		return ""
	}
	return self
}

// othersMayRun says whether any user may reach and run path: every folder
// above it passable by others, and the file runnable by them. A binary
// that is not (such as a test binary in go's 0700 build folder) is not
// bound, as bwrap, running as the box's user, could not reach it.
func othersMayRun(path string) bool {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm()&0o005 != 0o005 {
		return false
	}
	for d := filepath.Dir(filepath.Clean(path)); d != "/"; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
	}
	return true
}

// underTmp says whether path lies in a folder the sandbox makes private.
func underTmp(path string) bool {
	for _, d := range []string{"/tmp/", "/var/tmp/"} {
		if strings.HasPrefix(filepath.Clean(path), d) {
			return true
		}
	}
	return false
}

// envList is the process's whole environment: the template's, nothing of
// boxsnap's own.
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	if len(out) == 0 {
		return []string{} // not nil: nil would pass boxsnap's environment on
	}
	return out
}

// MakeFolder makes dir and each missing folder above it. As root, the
// folders it makes let others pass (0711: o+x, not listing), as a box's
// user must to reach its box's folder below them; otherwise, as box
// processes then run as boxsnap's own user, they are 0700. Folders that
// exist are left as they are (Passable's rule).
func MakeFolder(dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	mode := fs.FileMode(0o700)
	if os.Geteuid() == 0 {
		mode = 0o711
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], mode); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		// Mkdir's mode passes through the umask: set it as meant.
		if err := os.Chmod(missing[i], mode); err != nil {
			return err
		}
	}
	return nil
}

// Passable lets others pass through dir and each folder above it up to stop
// (o+x, not listing), as a box's user must to reach its box's folder when
// boxsnap runs as root. boxsnap never does it by itself to folders it did
// not make; tests call it on their temporary folders.
func Passable(dir, stop string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	for d := filepath.Clean(dir); d != "/" && d != filepath.Clean(stop) && d != "."; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, fi.Mode().Perm()|0o011); err != nil {
				return err
			}
		}
	}
	return nil
}

// terminate sends SIGTERM to the box's process group. Inside bubblewrap the
// group's leader is bwrap itself, which dies of SIGTERM and takes the whole
// sandbox with it: there each process of the group but the leader gets it,
// so the box's own processes end as they choose, or are killed with the
// group after the stop's bound, as without bubblewrap.
//
// A box in a freezer cgroup is thawed (a frozen process acts on no signal),
// and every process in the cgroup gets SIGTERM too, one that left the group
// (setsid) as well; what is left when the leader has ended is killed then
// (endFreezer).
func (p *proc) terminate() {
	pgid := p.cmd.Process.Pid
	if p.cgroup != "" {
		_ = thaw(p.cgroup)
		for _, pid := range cgroupProcs(p.cgroup) {
			if pid != os.Getpid() && (!p.sandboxed || pid != pgid) {
				_ = syscall.Kill(pid, syscall.SIGTERM)
			}
		}
	}
	if !p.sandboxed {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		return
	}
	for _, pid := range groupMembers(pgid) {
		if pid != pgid {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
	}
}

// groupMembers reads /proc for the processes of a process group.
func groupMembers(pgid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) {
			continue
		}
		if f := strings.Fields(s[i+2:]); len(f) >= 3 && f[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

// freezerRoot is the cgroup v1 freezer folder boxsnap makes each box
// process's cgroup in. Every process of the box stays in its cgroup, one
// that leaves the box's process group and session (setsid) too, so a take
// freezes all of them; a box user cannot move a process out (the cgroups'
// files are root's).
const freezerRoot = "/sys/fs/cgroup/freezer/boxsnap"

// newFreezer makes a freezer cgroup for one start of the box's process. Its
// name has a random tail: two backends on one host (tests, two installs)
// may hold boxes of the same ID.
func newFreezer(box string) (string, error) {
	if err := os.Mkdir(freezerRoot, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	cg := filepath.Join(freezerRoot, box+"-"+randomSuffix()[:8])
	if err := os.Mkdir(cg, 0o755); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(cg, "freezer.state")); err != nil {
		_ = os.Remove(cg)
		return "", fmt.Errorf("%s is not a freezer cgroup: %w", cg, err)
	}
	return cg, nil
}

// startIn starts cmd with its first process born inside the cgroup cg, so
// that nothing it runs, not even a child made before exec returns, is ever
// outside it. cgroup v1 moves a single thread (its tasks file): a thread
// locked for the fork is moved in, forks the process, and is moved back.
// The thread lives on after (a thread that ends would be the parent whose
// death bwrap --die-with-parent watches). Should it not get back out, it
// stays parked on its own goroutine, so nothing of boxsnap runs on it
// while the box is frozen.
func (b *Backend) startIn(cmd *exec.Cmd, cg string) (inCgroup bool, err error) {
	type result struct {
		in  bool
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		tid := []byte(strconv.Itoa(unix.Gettid()))
		home, herr := threadFreezer()
		if herr != nil || os.WriteFile(filepath.Join(cg, "tasks"), tid, 0) != nil {
			runtime.UnlockOSThread()
			ch <- result{false, cmd.Start()}
			return
		}
		err := cmd.Start()
		if werr := os.WriteFile(filepath.Join(home, "tasks"), tid, 0); werr != nil {
			b.log.Error("local backend: a thread of boxsnap could not leave a box's freezer cgroup; it is parked", "cgroup", cg, "err", werr)
			ch <- result{true, err}
			select {}
		}
		runtime.UnlockOSThread()
		ch <- result{true, err}
	}()
	r := <-ch
	return r.in, r.err
}

// threadFreezer is the freezer cgroup folder of the calling thread.
func threadFreezer() (string, error) {
	data, err := os.ReadFile("/proc/thread-self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		// hierarchy-ID:controllers:path
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && f[1] == "freezer" {
			return filepath.Join(filepath.Dir(freezerRoot), f[2]), nil
		}
	}
	return "", errors.New("no freezer cgroup in /proc/thread-self/cgroup")
}

// freeze freezes the cgroup and waits, up to wait, until the kernel says
// every process in it is frozen. It answers false when some still were
// not by then (FREEZING); the cgroup is left freezing, and thaw undoes it.
func freeze(cg string, wait time.Duration) (bool, error) {
	state := filepath.Join(cg, "freezer.state")
	if err := os.WriteFile(state, []byte("FROZEN"), 0); err != nil {
		return false, err
	}
	deadline := time.Now().Add(wait)
	for pause := 50 * time.Microsecond; ; pause = min(2*pause, 5*time.Millisecond) {
		data, err := os.ReadFile(state)
		if err != nil {
			return false, err
		}
		if strings.TrimSpace(string(data)) == "FROZEN" {
			return true, nil
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		time.Sleep(pause)
	}
}

// thaw lets the cgroup's processes run again.
func thaw(cg string) error {
	return os.WriteFile(filepath.Join(cg, "freezer.state"), []byte("THAWED"), 0)
}

// cgroupProcs reads the processes in the cgroup.
func cgroupProcs(cg string) []int {
	data, err := os.ReadFile(filepath.Join(cg, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// cgroupWait bounds how long the end of a box's process waits for what is
// left in its cgroup to die of SIGKILL.
const cgroupWait = 5 * time.Second

// endFreezer ends what is left of a box's processes once its leader has
// ended (a setsid'd process is no longer in its group, so the group's
// signals missed it), then removes the cgroup.
func (b *Backend) endFreezer(box, cg string) {
	_ = thaw(cg)
	deadline := time.Now().Add(cgroupWait)
	for {
		left := cgroupProcs(cg)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			b.log.Warn("local backend: processes of a box's freezer cgroup outlived SIGKILL", "box", box, "cgroup", cg, "pids", left)
			return
		}
		for _, pid := range left {
			if pid == os.Getpid() {
				// A thread of boxsnap's own that could not leave
				// (startIn): the cgroup stays.
				b.log.Warn("local backend: a box's freezer cgroup holds a thread of boxsnap's and is kept", "box", box, "cgroup", cg)
				return
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := os.Remove(cg); err != nil && !errors.Is(err, fs.ErrNotExist) {
		b.log.Warn("local backend: a box's freezer cgroup was not removed", "box", box, "cgroup", cg, "err", err)
	}
}
