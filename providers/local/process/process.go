package process

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Processes runs the boxes' processes on this host: the user each runs
// as, the sandbox (bwrap) and network (pasta) around it, and the cgroup
// that holds and freezes whatever it starts.
type Processes struct {
	log  *slog.Logger
	root string
	// warnedUser is set once the log said a template's user cannot be
	// switched to (boxsnap does not run as root).
	warnedUser bool
	// warnedPasta is set once the log said pasta is not installed.
	warnedPasta bool

	cgOnce sync.Once
	cg     Cgroups // where box cgroups are made (boxCgroups)

	BwrapOnce sync.Once
	Bwrap     string // bwrap's path when box processes run inside it
	selfPath  string // Config.Self
	// diskBound is a box's disk bound, from its limits (disk.go).
	diskBound func(providers.BoxLimits) int64
}

// NewProcesses runs the processes of the boxes of the store under root,
// logging to log; self is boxsnap's own executable (os.Executable() when
// empty).
func NewProcesses(log *slog.Logger, root, self string, diskBound func(providers.BoxLimits) int64) *Processes {
	return &Processes{log: log, root: root, selfPath: self, diskBound: diskBound}
}

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

// RunAs is who a box's process runs as.
type RunAs struct {
	Name     string
	Uid, Gid uint32
	// SwitchTo is set when boxsnap runs as root and switches to the user;
	// otherwise the process runs as boxsnap's own (unprivileged) user.
	SwitchTo bool
}

// BoxUser resolves the user a box's process runs as: the template's, or
// DefaultBoxUser, made when missing. It never answers root. Called with
// b.mu held.
func (b *Processes) BoxUser(name string) (RunAs, error) {
	if os.Geteuid() != 0 {
		me, err := user.Current()
		if err != nil {
			return RunAs{}, fmt.Errorf("read boxsnap's own user: %w", err)
		}
		if name != "" && name != me.Username && !b.warnedUser {
			b.warnedUser = true
			b.log.Warn("boxsnap does not run as root, so a box's process runs as boxsnap's own user, not the template's", "user", me.Username, "template_user", name)
		}
		return RunAs{Name: me.Username, Uid: uint32(os.Geteuid()), Gid: uint32(os.Getegid())}, nil
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
			return RunAs{}, fmt.Errorf("make the unprivileged user %s for box processes: %v: %s", DefaultBoxUser, addErr, out)
		}
		b.log.Info("made the unprivileged user that box processes run as (useradd --system)", "user", DefaultBoxUser)
		u, err = user.Lookup(name)
	}
	if errors.As(err, &unknown) {
		return RunAs{}, &providers.RefusedError{Why: fmt.Sprintf("The box's user %s does not exist on this host.", name)}
	}
	if err != nil {
		return RunAs{}, fmt.Errorf("look up the box's user %s: %w", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return RunAs{}, fmt.Errorf("the box's user %s has no numeric IDs", name)
	}
	if uid == 0 || gid == 0 {
		return RunAs{}, &providers.RefusedError{Why: fmt.Sprintf("A box's process never runs as root, and %s is root.", name)}
	}
	return RunAs{Name: name, Uid: uint32(uid), Gid: uint32(gid), SwitchTo: true}, nil
}

// OwnBy gives the box's folder to the box's user the first time its process
// starts (a template's copy keeps the template's owners), so that the
// process can write in it and nowhere else of boxsnap's.
func OwnBy(dir string, who RunAs) error {
	if !who.SwitchTo {
		return nil
	}
	t, err := confined.OpenTree(dir)
	if err != nil {
		return err
	}
	defer t.Close()
	var st unix.Stat_t
	if err := t.Lstat(".", &st); err == nil && st.Uid == who.Uid {
		return nil
	}
	return chownBeneath(t, ".", who)
}

// chownBeneath gives rel and all it holds to who, each path found beneath
// t through no link, and a link's own owner set, never its target's.
func chownBeneath(t *confined.Beneath, rel string, who RunAs) error {
	if err := t.Lchown(rel, int(who.Uid), int(who.Gid)); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := t.Lstat(rel, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return err
	}
	ents, err := confined.ReadDirBeneath(t, rel)
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

// Sandbox says whether box processes run inside bubblewrap: bwrap is
// installed and makes a sandbox as the box's user on this host. Probed
// once, and said in the log.
func (b *Processes) Sandbox(who RunAs) string {
	b.BwrapOnce.Do(func() {
		path, err := exec.LookPath("bwrap")
		if err != nil {
			b.log.Warn("bubblewrap (bwrap) is not installed: box processes run as an unprivileged user with limits, but see the whole host's files that user may read and share the host's network, its loopback too (README, Security model)")
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		probe := exec.CommandContext(ctx, path, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "--", "/bin/true")
		probe.Env = []string{}
		if who.SwitchTo {
			probe.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: who.Uid, Gid: who.Gid, Groups: []uint32{}}}
		}
		if out, err := probe.CombinedOutput(); err != nil {
			b.log.Warn("bubblewrap cannot make a sandbox on this host: box processes run without it", "err", err, "output", string(out))
			return
		}
		b.Bwrap = path
		b.log.Info("box processes run inside bubblewrap: only the box's folder is writable, boxsnap's own folder is hidden, and each box has its own network namespace, without the host's loopback")
	})
	return b.Bwrap
}

// ProcessArgs is the command line of a box's process: bwrap where it
// works, then prlimit setting the limits before the command runs (Go's
// SysProcAttr has no rlimits, and setting them on boxsnap itself would bound
// boxsnap), then the shell. bwrap gives the box its own network namespace;
// with waitNet, bwrap names its sandbox process on fd 3 (--info-fd) and
// waits for a byte on fd 4 (--block-fd) before it runs the command, so that
// the command starts with its network set up (network.go).
func (b *Processes) ProcessArgs(dir, command string, lim providers.BoxLimits, who RunAs, waitNet bool) ([]string, error) {
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
	if bw := b.Sandbox(who); bw != "" {
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
		fmt.Sprintf("--fsize=%d", b.diskBound(lim)))
	switch {
	case lim.Processes > 0:
		args = append(args, fmt.Sprintf("--nproc=%d", lim.Processes))
	case who.SwitchTo:
		// Not as boxsnap's own user: its count holds boxsnap's threads too.
		args = append(args, fmt.Sprintf("--nproc=%d", DefaultProcesses))
	}
	return append(args, "--", "/bin/sh", "-c", command), nil
}

// self is boxsnap's own executable, or "" when it cannot be told.
func (b *Processes) self() string {
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

// EnvList is the process's whole environment: the template's, nothing of
// boxsnap's own.
func EnvList(env map[string]string) []string {
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

// GroupMembers reads /proc for the processes of a process group.
func GroupMembers(pgid int) []int {
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

// A box's process is born in a cgroup of its own, made for its start, so
// that a take freezes every process of the box, one that left the box's
// process group and session (setsid) too; a box user cannot move a process
// out (the cgroups' files are root's). boxsnap makes it in a cgroup v2
// (unified) hierarchy where one is mounted and lets it make cgroups, in
// the cgroup v1 freezer otherwise: cgroup v2's freeze (cgroup.freeze) is
// part of the core and needs no controller, so it works on a host whose
// controllers are all on v1, where the unified hierarchy holds none.

// Cgroups is the folder boxsnap makes box cgroups in, and its version.
type Cgroups struct {
	// Root is <hierarchy>/boxsnap; "" where boxsnap can make none.
	Root string
	V2   bool
}

// V1FreezerRoot is where the cgroup v1 freezer is mounted on Debian.
const V1FreezerRoot = "/sys/fs/cgroup/freezer"

// CgroupsAt makes (or finds) the boxsnap folder in the hierarchy mounted
// at mount, and says whether it is one boxsnap can freeze box cgroups in:
// v2 where its cgroups have cgroup.freeze, v1 where they have
// freezer.state.
func CgroupsAt(mount string) (Cgroups, error) {
	root := filepath.Join(mount, "boxsnap")
	if err := os.Mkdir(root, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return Cgroups{}, err
	}
	if _, err := os.Stat(filepath.Join(root, "cgroup.freeze")); err == nil {
		return Cgroups{Root: root, V2: true}, nil
	}
	if _, err := os.Stat(filepath.Join(root, "freezer.state")); err == nil {
		return Cgroups{Root: root}, nil
	}
	_ = os.Remove(root) // made here for nothing, or kept by another process
	return Cgroups{}, fmt.Errorf("%s freezes no cgroup (neither cgroup.freeze nor freezer.state)", mount)
}

// detectCgroups picks the hierarchy box cgroups are made in from the
// mounts in mountinfo (/proc/self/mountinfo's lines): the first cgroup v2
// mount that lets boxsnap make its folder, /sys/fs/cgroup first; else the
// cgroup v1 freezer. It answers, too, why each other one was not taken.
func detectCgroups(mountinfo string) (Cgroups, []string) {
	var v2, v1 []string
	for _, line := range strings.Split(mountinfo, "\n") {
		// … mount-point … - fstype source super-options
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 {
			continue
		}
		mount := UnescapeMount(f[4])
		switch {
		case g[0] == "cgroup2" && mount == "/sys/fs/cgroup":
			v2 = append([]string{mount}, v2...)
		case g[0] == "cgroup2":
			v2 = append(v2, mount)
		case g[0] == "cgroup" && slices.Contains(strings.Split(g[2], ","), "freezer"):
			v1 = append(v1, mount)
		}
	}
	var why []string
	for _, m := range append(v2, v1...) {
		c, err := CgroupsAt(m)
		if err == nil {
			return c, why
		}
		why = append(why, err.Error())
	}
	if len(v2)+len(v1) == 0 {
		why = append(why, "no cgroup v2 hierarchy and no cgroup v1 freezer is mounted")
	}
	return Cgroups{}, why
}

// UnescapeMount undoes mountinfo's octal escapes (\040 for a space).
func UnescapeMount(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				out.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		out.WriteByte(s[i])
	}
	return out.String()
}

// BoxCgroups is the hierarchy this backend makes box cgroups in, found
// once (detectCgroups) and said in the log.
func (b *Processes) BoxCgroups() Cgroups {
	b.cgOnce.Do(func() {
		info, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			b.log.Warn("local backend: the host's mounts cannot be read, so box processes get no cgroup: a take pauses a box's process group only (SIGSTOP)", "err", err)
			return
		}
		var why []string
		b.cg, why = detectCgroups(string(info))
		switch {
		case b.cg.Root == "":
			b.log.Warn("local backend: no cgroup can be made for box processes: a take pauses a box's process group only (SIGSTOP)", "why", strings.Join(why, "; "))
		case b.cg.V2:
			b.log.Info("local backend: box processes are frozen for a take through cgroup v2 (cgroup.freeze)", "cgroups", b.cg.Root)
		default:
			b.log.Info("local backend: box processes are frozen for a take through the cgroup v1 freezer", "cgroups", b.cg.Root, "v2_not_taken", strings.Join(why, "; "))
		}
	})
	return b.cg
}

// UseCgroups makes the backend make box cgroups in c, in place of what
// detectCgroups would find; it must come before the first start.
func (b *Processes) UseCgroups(c Cgroups) bool {
	set := false
	b.cgOnce.Do(func() { b.cg, set = c, true })
	return set
}

// CgroupTag names this backend's root in its box cgroups' names: two
// backends on one host (tests, two installs) may hold boxes of the same
// ID, and each cleans only its own (cleanCgroups).
func (b *Processes) CgroupTag() string {
	sum := sha256.Sum256([]byte(b.root))
	return hex.EncodeToString(sum[:4])
}

// NewFreezer makes a cgroup for one start of the box's process,
// <box>-<backend's tag>-<random>: the random tail keeps two starts apart.
func (b *Processes) NewFreezer(box string) (string, error) {
	c := b.BoxCgroups()
	if c.Root == "" {
		return "", errors.New("boxsnap can make no cgroup on this host")
	}
	cg := filepath.Join(c.Root, box+"-"+b.CgroupTag()+"-"+store.RandomSuffix()[:8])
	if err := os.Mkdir(cg, 0o755); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(cg, freezeFile(cg))); err != nil {
		_ = os.Remove(cg)
		return "", fmt.Errorf("%s is not a cgroup boxsnap can freeze: %w", cg, err)
	}
	return cg, nil
}

// IsV2 says whether the cgroup cg is a cgroup v2 one.
func IsV2(cg string) bool {
	_, err := os.Stat(filepath.Join(cg, "cgroup.freeze"))
	return err == nil
}

// freezeFile is the file that freezes the cgroup cg.
func freezeFile(cg string) string {
	if IsV2(cg) {
		return "cgroup.freeze"
	}
	return "freezer.state"
}

// StartIn starts cmd with its first process born inside the cgroup cg, so
// that nothing it runs, not even a child made before exec returns, is ever
// outside it. cgroup v1 moves a single thread (its tasks file): a thread
// locked for the fork is moved in, forks the process, and is moved back.
// The thread lives on after (a thread that ends would be the parent whose
// death bwrap --die-with-parent watches). Should it not get back out, it
// stays parked on its own goroutine, so nothing of boxsnap runs on it
// while the box is frozen.
//
// In cgroup v2 a process moves whole, with all its threads, so there the
// process is cloned straight into the cgroup (clone3's CLONE_INTO_CGROUP).
func (b *Processes) StartIn(cmd *exec.Cmd, cg string) (inCgroup bool, err error) {
	if IsV2(cg) {
		dir, err := os.Open(cg)
		if err != nil {
			return false, cmd.Start()
		}
		defer dir.Close()
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = int(dir.Fd())
		return true, cmd.Start()
	}
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
			return filepath.Join(V1FreezerRoot, f[2]), nil
		}
	}
	return "", errors.New("no freezer cgroup in /proc/thread-self/cgroup")
}

// Freeze freezes the cgroup and waits, up to wait, until the kernel says
// every process in it is frozen: cgroup.events says "frozen 1" (v2), or
// freezer.state says FROZEN (v1). It answers false when some still were
// not by then; the cgroup is left freezing, and thaw undoes it.
func Freeze(cg string, wait time.Duration) (bool, error) {
	file, value, done := filepath.Join(cg, "freezer.state"), "FROZEN", func(s string) bool { return strings.TrimSpace(s) == "FROZEN" }
	if IsV2(cg) {
		file, value = filepath.Join(cg, "cgroup.freeze"), "1"
		done = func(s string) bool { return slices.Contains(strings.Split(s, "\n"), "frozen 1") }
	}
	if err := os.WriteFile(file, []byte(value), 0); err != nil {
		return false, err
	}
	state := file
	if value == "1" {
		state = filepath.Join(cg, "cgroup.events")
	}
	deadline := time.Now().Add(wait)
	for pause := 50 * time.Microsecond; ; pause = min(2*pause, 5*time.Millisecond) {
		data, err := os.ReadFile(state)
		if err != nil {
			return false, err
		}
		if done(string(data)) {
			return true, nil
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		time.Sleep(pause)
	}
}

// Thaw lets the cgroup's processes run again.
func Thaw(cg string) error {
	if IsV2(cg) {
		return os.WriteFile(filepath.Join(cg, "cgroup.freeze"), []byte("0"), 0)
	}
	return os.WriteFile(filepath.Join(cg, "freezer.state"), []byte("THAWED"), 0)
}

// CgroupProcs reads the processes in the cgroup.
func CgroupProcs(cg string) []int {
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

// CgroupWait bounds how long the end of a box's process waits for what is
// left in its cgroup to die of SIGKILL.
const CgroupWait = 5 * time.Second

// EndFreezer ends what is left of a box's processes once its leader has
// ended (a setsid'd process is no longer in its group, so the group's
// signals missed it), then removes the cgroup.
func (b *Processes) EndFreezer(box, cg string) {
	_ = Thaw(cg)
	deadline := time.Now().Add(CgroupWait)
	for {
		left := CgroupProcs(cg)
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
