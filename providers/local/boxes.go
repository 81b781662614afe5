package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/disks"
	"github.com/boxsnap/boxsnap/providers/local/owners"
	"github.com/boxsnap/boxsnap/providers/local/process"
	"github.com/boxsnap/boxsnap/providers/local/state"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// identity is what the identity marker holds.
type identity struct {
	Box          string `json:"box"`
	ResetVersion int    `json:"resetVersion"`
}

// existingBox checks a guest's folder is there, wrapping ErrNotFound if not.
// A box whose disk image is not mounted on its folder (after a host's
// restart) has it mounted first.
func (b *Backend) existingBox(guest providers.Guest) (string, error) {
	if err := store.CheckID("box", guest.Ref); err != nil {
		return "", err
	}
	dir := b.Store.BoxDir(guest.Ref)
	if err := (resets{b}).finishReset(guest.Ref); err != nil {
		return "", err
	}
	if err := b.EnsureMounted(guest.Ref); err != nil {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("box %s: its folder %s does not exist: %w", guest.Ref, dir, providers.ErrNotFound)
		}
		return "", fmt.Errorf("box %s: %w", guest.Ref, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("box %s: %s is not a folder: %w", guest.Ref, dir, providers.ErrNotFound)
	}
	return dir, nil
}

func (b *Backend) guestOf(box, kind string) providers.Guest {
	return providers.Guest{Backend: b.id, Kind: kind, Host: b.host, Ref: box, Generation: 1}
}

// writeIdentity writes the identity marker naming box, as boxsnap does when a
// box is first ready and after a fork's reset, so a fork never carries its
// source's identity.
// It writes beneath dir through no link (package confined): a .boxsnap that is a
// link, as a snapshot or a template may hold, is replaced, never followed.
func writeIdentity(dir, box string) error {
	root, err := confined.OpenTree(dir)
	if err != nil {
		return fmt.Errorf("write the identity marker: %w", err)
	}
	defer root.Close()
	mfd, err := root.MarkerFolder()
	if err != nil {
		return fmt.Errorf("write the identity marker: %w", err)
	}
	defer unix.Close(mfd)
	data, _ := json.Marshal(identity{Box: box, ResetVersion: IdentityResetVersion})
	return confined.WriteAt(mfd, path.Base(confined.IdentityFile), data, 0o600, -1, -1)
}

// readResetVersion reads the identity reset's version in the box's marker,
// or 0 when it is missing or unreadable (not fork-safe), or reached only
// through a link.
func readResetVersion(dir string) int {
	root, err := confined.OpenTree(dir)
	if err != nil {
		return 0
	}
	defer root.Close()
	mfd, err := root.Open(confined.MarkerDir, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return 0
	}
	defer unix.Close(mfd)
	data, err := confined.ReadAt(mfd, path.Base(confined.IdentityFile), 1<<16)
	if err != nil {
		return 0
	}
	var id identity
	if json.Unmarshal(data, &id) != nil || id.ResetVersion < 0 {
		return 0
	}
	return id.ResetVersion
}

// Acquire makes a box's folder, empty or as a copy of a template folder, and
// writes its identity marker. spec.Adopt adopts a folder already under the
// backend's boxes folder instead. A box made with spec.Ran reads as
// running (state.BoxState.Carried) though no process starts.
func (b *Backend) Acquire(ctx context.Context, spec providers.BoxSpec) (providers.Guest, error) {
	box := spec.Box.ID
	if spec.Adopt != "" {
		box = spec.Adopt
	}
	if err := store.CheckID("box", box); err != nil {
		return providers.Guest{}, err
	}
	if err := process.CheckPublish(spec.Publish); err != nil {
		return providers.Guest{}, err
	}
	dir := b.Store.BoxDir(box)
	if spec.Adopt != "" {
		if _, err := b.existingBox(providers.Guest{Ref: box}); err != nil {
			return providers.Guest{}, fmt.Errorf("adopt box folder: %w", err)
		}
	} else {
		if _, err := os.Lstat(dir); err == nil {
			return providers.Guest{}, &providers.RefusedError{Why: fmt.Sprintf("A box folder named %s already exists", box)}
		}
		src := ""
		if spec.Template != "" {
			var err error
			if src, err = b.TemplateDir(spec.Template); err != nil {
				return providers.Guest{}, err
			}
		}
		if _, err := b.MakeBoxFolder(ctx, dir, b.ImageFile(box), diskBound(spec.Limits, b.diskBytes)); err != nil {
			return providers.Guest{}, fmt.Errorf("make box %s: %w", box, err)
		}
		if src != "" {
			if err := b.CopyTree(ctx, src, dir); err != nil {
				_ = b.RemoveBoxFolder(dir, b.ImageFile(box))
				return providers.Guest{}, fmt.Errorf("make box %s from template %s: %w", box, src, err)
			}
		}
	}
	if err := writeIdentity(dir, box); err != nil {
		return providers.Guest{}, fmt.Errorf("box %s: %w", box, err)
	}
	st := state.BoxState{ID: box, Kind: spec.Box.Kind, Command: spec.Command, User: spec.User, Env: spec.Env, Limits: spec.Limits,
		NoNetwork: spec.NoNetwork, Publish: spec.Publish, Carried: spec.Ran}
	b.mu.Lock()
	err := b.WriteState(st)
	b.mu.Unlock()
	if err != nil {
		return providers.Guest{}, fmt.Errorf("box %s: %w", box, err)
	}
	return b.guestOf(box, spec.Box.Kind), nil
}

// Release stops the box's process and deletes its folder (unmounted
// first, where it is its own file system), its disk image and its state. Its
// snapshots stay: the core deletes the ones it does not keep first.
func (b *Backend) Release(ctx context.Context, guest providers.Guest) error {
	if err := store.CheckID("box", guest.Ref); err != nil {
		return err
	}
	if err := b.Stop(ctx, guest); err != nil && !errors.Is(err, providers.ErrNotFound) {
		return fmt.Errorf("release box %s: %w", guest.Ref, err)
	}
	if err := b.RemoveBoxFolder(b.Store.BoxDir(guest.Ref), b.ImageFile(guest.Ref)); err != nil {
		return fmt.Errorf("release box %s: %w", guest.Ref, err)
	}
	for _, f := range []string{b.StateFile(guest.Ref), b.StatCacheFile(guest.Ref), b.Path(store.DirState, guest.Ref+".log"), b.Path(store.DirState, guest.Ref+".lock"), resets{b}.resetRecordFile(guest.Ref), b.FoundFile(guest.Ref)} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("release box %s: %w", guest.Ref, err)
		}
	}
	return nil
}

// Start runs the box's command, if it has one, in its folder in a process
// group of its own, and marks the box running. A box whose process another
// boxsnap process on this data folder runs is left running there: it never
// runs twice.
func (b *Backend) Start(ctx context.Context, guest providers.Guest) error {
	dir, err := b.existingBox(guest)
	if err != nil {
		return err
	}
	unlock, err := b.LockBox(guest.Ref)
	if err != nil {
		return err
	}
	defer unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	st, err := b.ReadState(guest.Ref)
	if err != nil {
		return err
	}
	if p := b.procs[guest.Ref]; p != nil && !p.exited() {
		return nil
	}
	if st.Command != "" && !st.Proc.Alive() && b.leave {
		// A process that owns boxes starts it (TakeOver).
		st.Proc, st.Owner = nil, ""
	}
	started := false
	if st.Command != "" && !st.Proc.Alive() && !b.leave {
		st.Proc.Forget()
		st.Proc = nil
		if err := b.startLocked(dir, guest.Ref, &st); err != nil {
			return fmt.Errorf("start box %s: %w", guest.Ref, err)
		}
		started = true
	}
	st.Running = true
	st.DiskStop, st.Carried = nil, false
	if err := b.WriteState(st); err != nil {
		if !started {
			return err
		}
		// A process its state file does not name would run on unseen by
		// the other boxsnap processes, and one of them would start another.
		b.endStarted(guest.Ref)
		return fmt.Errorf("start box %s: its state file does not record the process, so it was ended: %w", guest.Ref, err)
	}
	b.StartJournal(guest.Ref, dir)
	return nil
}

// startLocked starts the box's process: never as root (boxUser), in its own
// session and process group, in the box's folder, with only the template's
// environment and its limits, inside bubblewrap where it works. Its freezer
// cgroup is written in the box's state file, with this process as owner and
// the box running, before the process starts (recordStarting); the process
// itself is recorded in st, which the caller writes.
func (b *Backend) startLocked(dir, box string, st *state.BoxState) (err error) {
	who, err := b.BoxUser(st.User)
	if err != nil {
		return err
	}
	if err := process.OwnBy(dir, who); err != nil {
		return fmt.Errorf("give the box's folder to %s: %w", who.Name, err)
	}
	pasta := ""
	if !st.NoNetwork && b.Sandbox(who) != "" {
		pasta = b.PastaPath()
	}
	cmd, logf, sandboxed, err := b.boxCommand(dir, box, st, who, pasta != "")
	if err != nil {
		return err
	}
	// With a network, bwrap names its sandbox process on infoW (fd 3) and
	// waits on blockR (fd 4) until pasta has set the network up.
	var pipes sandboxPipes
	if pasta != "" {
		if pipes, err = newSandboxPipes(); err != nil {
			logf.Close()
			return err
		}
		defer pipes.infoR.Close()
		defer pipes.blockW.Close()
		cmd.ExtraFiles = []*os.File{pipes.infoW, pipes.blockR}
	}
	cg, cgErr := b.NewFreezer(box)
	if cgErr == nil {
		// The state file names the cgroup before anything runs in it: an
		// owner killed between the start and the record below (or a
		// sandbox that outlives it) leaves processes every boxsnap process
		// finds there, and ends before it starts the box's again.
		if rerr := b.recordStarting(*st, cg, sandboxed); rerr != nil {
			_ = os.Remove(cg)
			logf.Close()
			return rerr
		}
		defer func() {
			if err != nil {
				_ = b.WriteState(*st) // nothing runs in the cgroup
			}
		}()
		var in bool
		in, err = b.StartIn(cmd, cg)
		if !in {
			_ = os.Remove(cg)
			cg, cgErr = "", errors.New("a thread could not be moved into it")
		}
	} else {
		err = cmd.Start()
	}
	if err == nil && b.hooks.spawned != nil {
		b.hooks.spawned()
	}
	if pasta != "" {
		// The child holds its own ends now.
		pipes.infoW.Close()
		pipes.blockR.Close()
	}
	if cgErr != nil {
		b.log.Warn("local backend: the box's process has no freezer cgroup: a take pauses its process group only (SIGSTOP), and a process that leaves the group (setsid) runs on during the take",
			"box", box, "err", cgErr)
	}
	if err != nil {
		if cg != "" {
			_ = os.Remove(cg)
		}
		logf.Close()
		if errors.Is(err, fs.ErrPermission) && who.SwitchTo {
			return &providers.RefusedError{Why: fmt.Sprintf("The box's user %s cannot reach the box's folder %s: every folder above it must let others pass (chmod o+x).", who.Name, dir)}
		}
		return err
	}
	var net *exec.Cmd
	if pasta != "" {
		if net, err = b.giveNetwork(cmd, box, cg, pasta, pipes, st.Publish, who, logf); err != nil {
			return err
		}
	}
	b.watchProcess(dir, box, st, cmd, sandboxed, cg, net, logf)
	return nil
}

// boxCommand makes the box's command, not yet started: never as root (who),
// in its own session and process group, in the box's folder, with only the
// template's environment and its limits, its output to the box's log in
// the store's state folder, which it opens. sandboxed says it runs inside
// bubblewrap, armed to die with its owner.
func (b *Backend) boxCommand(dir, box string, st *state.BoxState, who process.RunAs, network bool) (cmd *exec.Cmd, logf *os.File, sandboxed bool, err error) {
	args, err := b.ProcessArgs(dir, st.Command, st.Limits, who, network)
	if err != nil {
		return nil, nil, false, err
	}
	logf, err = os.OpenFile(b.Path(store.DirState, box+".log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, false, err
	}
	// The process outlives the call's context: it is stopped by Stop only.
	cmd = exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = process.EnvList(st.Env)
	cmd.Stdout = logf
	cmd.Stderr = logf
	// Setsid makes the process the leader of its own session and process
	// group (pgid = pid), which Stop and pause signal as a whole.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if who.SwitchTo {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: who.Uid, Gid: who.Gid, Groups: []uint32{}}
	}
	sandboxed = b.Bwrap != "" && args[0] == b.Bwrap
	if sandboxed {
		// bwrap arms its own --die-with-parent only once it has made its
		// namespaces, and its sandbox's init later still: an owner that
		// dies before would leave it running. This is armed before bwrap
		// runs (after the switch of user, which would clear it).
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	return cmd, logf, sandboxed, nil
}

// sandboxPipes are the pipes a sandbox with a network starts with: bwrap
// names its sandbox process on infoW (fd 3) and waits on blockR (fd 4)
// until pasta has set the network up.
type sandboxPipes struct {
	infoR, infoW, blockR, blockW *os.File
}

// newSandboxPipes opens a sandbox's pipes; on failure none is left open.
func newSandboxPipes() (sandboxPipes, error) {
	var p sandboxPipes
	var err error
	if p.infoR, p.infoW, err = os.Pipe(); err == nil {
		if p.blockR, p.blockW, err = os.Pipe(); err != nil {
			p.infoR.Close()
			p.infoW.Close()
		}
	}
	return p, err
}

// giveNetwork gives the started sandbox its network: pasta in the
// namespace of the sandbox process bwrap names, then bwrap let go on. On
// failure the command, which never ran, is ended with its freezer cgroup
// and the box's log closed; otherwise it gives pasta's process.
func (b *Backend) giveNetwork(cmd *exec.Cmd, box, cg, pasta string, pipes sandboxPipes, publish []int, who process.RunAs, logf *os.File) (*exec.Cmd, error) {
	var net *exec.Cmd
	pid, nerr := process.SandboxPid(pipes.infoR)
	if nerr == nil {
		net, nerr = process.StartPasta(pasta, pid, publish, who, logf)
	}
	if nerr == nil {
		_, nerr = pipes.blockW.Write([]byte{1})
	}
	if nerr == nil {
		process.WaitCommandRuns(pid, 2*time.Second)
	}
	if nerr != nil {
		// The command never ran: bwrap waits on fd 4 still.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		process.EndPasta(net)
		if cg != "" {
			b.EndFreezer(box, cg)
		}
		logf.Close()
		return nil, fmt.Errorf("give the box its network: %w", nerr)
	}
	return net, nil
}

// watchProcess records the started process as the box's, in b.procs and
// in st (running, with this process as owner), and watches it: its end
// ends pasta and the freezer cgroup and closes the box's log, and its disk
// is watched against its bound.
func (b *Backend) watchProcess(dir, box string, st *state.BoxState, cmd *exec.Cmd, sandboxed bool, cg string, net *exec.Cmd, logf *os.File) {
	p := &proc{cmd: cmd, done: make(chan struct{}), sandboxed: sandboxed, cgroup: cg, pasta: net}
	go func() {
		_ = cmd.Wait()
		process.EndPasta(net)
		if cg != "" {
			b.EndFreezer(box, cg)
		}
		logf.Close()
		close(p.done)
	}()
	b.procs[box] = p
	st.Proc = state.RecordOf(cmd.Process.Pid, cg, p.sandboxed)
	st.Owner = b.owner
	st.Running, st.DiskStop = true, nil
	if fi, err := os.Stat(b.ImageFile(box)); err == nil && disks.IsMounted(dir) {
		go b.watchRoom(box, dir, p, fi.Size(), logf)
	} else {
		go b.watchDisk(box, dir, p, diskBound(st.Limits, b.diskBytes), logf)
	}
}

// recordStarting writes st as a start about to run the box's process in the
// freezer cgroup cg would leave it, owned here: what runs in cg is the box's
// process, found by any boxsnap process on this data folder (state.ProcRecord's
// alive, endRecorded), even if this one dies before it records the
// process's leader. Called with b.mu held.
func (b *Backend) recordStarting(st state.BoxState, cg string, sandboxed bool) error {
	st.Proc = &state.ProcRecord{Cgroup: cg, Sandboxed: sandboxed}
	st.Owner = b.owner
	st.Running, st.DiskStop = true, nil
	if err := b.WriteState(st); err != nil {
		return fmt.Errorf("start box %s: its state file cannot record the process about to start, so none was started: %w", st.ID, err)
	}
	return nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop ends the box's process group: SIGTERM, then SIGKILL after the bound
// (Config.StopTimeout), marks the box stopped and ends its change journal.
func (b *Backend) Stop(ctx context.Context, guest providers.Guest) error {
	if err := store.CheckID("box", guest.Ref); err != nil {
		return err
	}
	b.NoteAtStop(guest)
	b.EndJournal(guest.Ref)
	return b.stop(ctx, guest)
}

// stop is Stop that keeps the change journal, for a restore's stop step.
// A box's process that another boxsnap process on this data folder started
// is ended too (endRecorded): every process of the box ends, whoever owns it.
func (b *Backend) stop(ctx context.Context, guest providers.Guest) error {
	unlock, err := b.LockBox(guest.Ref)
	if err != nil {
		return err
	}
	defer unlock()
	b.mu.Lock()
	p := b.procs[guest.Ref]
	delete(b.procs, guest.Ref)
	b.mu.Unlock()
	if p != nil && !p.exited() {
		pgid := p.cmd.Process.Pid
		// A paused group must be resumed to act on SIGTERM.
		p.terminate()
		_ = syscall.Kill(-pgid, syscall.SIGCONT)
		timer := time.NewTimer(b.stopTO)
		select {
		case <-p.done:
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
		// Whatever is left of the group, the leader included, is killed.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		if p.cgroup != "" {
			_ = process.Thaw(p.cgroup) // a frozen process dies of SIGKILL only once thawed
		}
		<-p.done
	}
	if _, err := os.Stat(b.StateFile(guest.Ref)); err != nil {
		return nil
	}
	b.mu.Lock()
	st, err := b.ReadState(guest.Ref)
	b.mu.Unlock()
	if err != nil {
		return err
	}
	if st.Proc.Alive() {
		b.EndRecorded(ctx, guest.Ref, st.Proc)
	}
	return b.UpdateState(guest.Ref, func(st *state.BoxState) { st.Running, st.Proc, st.Carried = false, nil, false })
}

// Status reads whether the box's folder exists, whether it runs, and its size.
func (b *Backend) Status(ctx context.Context, guest providers.Guest) (providers.GuestStatus, error) {
	dir, err := b.existingBox(guest)
	if err != nil {
		if errors.Is(err, providers.ErrNotFound) {
			return providers.GuestStatus{Exists: false}, nil
		}
		return providers.GuestStatus{}, err
	}
	running, err := b.running(guest.Ref)
	if err != nil {
		return providers.GuestStatus{}, err
	}
	size, err := boxSize(ctx, b, dir)
	if err != nil {
		return providers.GuestStatus{}, fmt.Errorf("box %s's size: %w", guest.Ref, err)
	}
	st, err := b.ReadState(guest.Ref)
	if err != nil {
		return providers.GuestStatus{}, err
	}
	stop := st.DiskStop
	if stop == nil {
		stop = b.FullStatus(guest.Ref, dir)
	}
	return providers.GuestStatus{Exists: true, Running: running, Size: &size, DiskStop: stop}, nil
}

// Runs says whether the box runs, without reading its size
// (providers.RunsReader): whether it is marked running (started, and not
// stopped since), or its process is alive. A box whose owner died is
// marked running while its process is down until a live process takes it
// over (TakeOver): a restore in that time reads that it ran, and starts it
// again, as the take-over would have. A box made to be carried over from
// a box that ran (BoxSpec.Ran) reads as running alike until its restore.
func (b *Backend) Runs(ctx context.Context, guest providers.Guest) (bool, error) {
	if _, err := b.existingBox(guest); err != nil {
		return false, err
	}
	b.mu.Lock()
	st, err := b.ReadState(guest.Ref)
	b.mu.Unlock()
	if err != nil {
		return false, err
	}
	if st.Running || st.Carried {
		return true, nil
	}
	return b.running(guest.Ref)
}

// running says whether the box runs: its process is alive, or, for a box with
// no command, it was started and not stopped.
func (b *Backend) running(box string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, err := b.ReadState(box)
	if err != nil {
		return false, err
	}
	if st.Command == "" {
		return st.Running, nil
	}
	if p := b.procs[box]; p != nil && !p.exited() {
		return true, nil
	}
	return st.Proc.Alive(), nil
}

// RestartRunning starts again the processes of boxes marked running whose
// process is not running, as after a restart of boxsnap (a box's process is
// boxsnap's child and ends with it). It answers the boxes it started. The
// first call removes the empty box cgroups a crash left (cleanCgroups).
func (b *Backend) RestartRunning(ctx context.Context) ([]string, error) {
	b.cleanOnce.Do(b.CleanCgroups)
	resets{b}.mountAll()
	files, err := os.ReadDir(b.Path(store.DirState))
	if err != nil {
		return nil, fmt.Errorf("restart running boxes: %w", err)
	}
	var started []string
	for _, f := range files {
		box, ok := strings.CutSuffix(f.Name(), ".json")
		if !ok || store.CheckID("box", box) != nil {
			continue
		}
		st, err := b.ReadState(box)
		if err != nil || !st.Running {
			continue
		}
		if st.Command == "" {
			// Nothing to run, but its change journal runs again.
			b.StartJournal(box, b.Store.BoxDir(box))
			continue
		}
		if run, _ := b.running(box); run {
			continue
		}
		if err := b.Start(ctx, b.guestOf(box, st.Kind)); err != nil {
			return started, err
		}
		started = append(started, box)
	}
	return started, nil
}

// pause freezes the box's processes, if it runs, and returns the function
// that thaws them; the caller always calls it. A box in a freezer cgroup
// (package process) is frozen whole, a process that left its group (setsid)
// too; one with none has its process group stopped with SIGSTOP and
// resumed with SIGCONT.
func (b *Backend) pause(box string) (resume func() time.Duration, paused bool) {
	b.mu.Lock()
	p := b.procs[box]
	var rec *state.ProcRecord
	if p == nil || p.exited() {
		if st, err := b.ReadState(box); err == nil {
			rec = st.Proc
		}
	}
	b.mu.Unlock()
	if rec != nil {
		return b.PauseRecorded(box, rec)
	}
	if p == nil || p.exited() {
		return func() time.Duration { return 0 }, false
	}
	start := time.Now()
	if p.cgroup != "" {
		all, err := process.Freeze(p.cgroup, owners.PauseWait)
		if err == nil {
			if !all {
				b.log.Warn("local backend: not every process of the box was frozen in time; the take goes on", "box", box, "wait", owners.PauseWait)
			}
			return func() time.Duration {
				if err := process.Thaw(p.cgroup); err != nil && !errors.Is(err, fs.ErrNotExist) {
					b.log.Error("local backend: the box's processes could not be thawed", "box", box, "cgroup", p.cgroup, "err", err)
				}
				return time.Since(start)
			}, true
		}
		_ = process.Thaw(p.cgroup)
		b.log.Warn("local backend: the box's freezer cgroup could not be frozen: the take pauses its process group only (SIGSTOP)", "box", box, "err", err)
	}
	pgid := p.cmd.Process.Pid
	if err := syscall.Kill(-pgid, syscall.SIGSTOP); err != nil {
		return func() time.Duration { return 0 }, false
	}
	// The signal is delivered asynchronously: wait until no process of the
	// group can run, so that nothing it does lands in the snapshot.
	deadline := time.Now().Add(owners.PauseWait)
	for time.Now().Before(deadline) && !process.GroupStopped(pgid) && !p.exited() {
		time.Sleep(200 * time.Microsecond)
	}
	return func() time.Duration {
		_ = syscall.Kill(-pgid, syscall.SIGCONT)
		return time.Since(start)
	}, true
}
