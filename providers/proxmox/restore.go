package proxmox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// RestoreSnapshot runs one step of a restore in the capture order: a hard
// stop, (the core's undo), the rollback, the start, the size read back. On
// ZFS, with the switch on, the core's undo is the held copy of the stopped
// guest (HoldCopy, the ZFS order), and the rollback goes to the newest
// snapshot only, never past a newer one.
func (b *Backend) RestoreSnapshot(ctx context.Context, g providers.Guest, ref providers.SnapshotRef, step providers.RestoreStep, rec providers.Recorder) (providers.RestoreProgress, error) {
	p := providers.RestoreProgress{Step: step}
	switch step {
	case providers.StepStop:
		// A guest whose state cannot be read is taken to have run.
		st, serr := b.Status(ctx, g)
		if err := b.power(ctx, g, "stop", rec); err != nil {
			return p, err
		}
		p.Done, p.Note, p.Ended = true, "stopped hard", serr != nil || st.Running
	case providers.StepRollback:
		note, err := b.rollback(ctx, g, ref, rec)
		if err != nil {
			return p, err
		}
		// A stopped guest that runs after its rollback came back from the
		// snapshot's memory: Proxmox resumes a VM's saved state.
		st, err := b.Status(ctx, g)
		p.Done, p.Note, p.Resumed = true, note, err == nil && st.Running
	case providers.StepStart:
		if err := b.start(ctx, g, rec); err != nil {
			return p, err
		}
		p.Done, p.Note = true, "started"
	case providers.StepReadSize:
		conf, err := b.readConfig(ctx, g, "")
		if err != nil {
			return p, err
		}
		p.Done = true
		p.Size = &providers.BoxSize{Cores: conf.Cores, MemoryBytes: conf.Memory, DiskBytes: conf.Disk}
	case providers.StepUndo:
		return p, fmt.Errorf("the undo is the core's own take: %w", providers.ErrUnsupported)
	default:
		return p, fmt.Errorf("restore step %q: %w", step, providers.ErrUnsupported)
	}
	return p, nil
}

func (b *Backend) rollback(ctx context.Context, g providers.Guest, ref providers.SnapshotRef, rec providers.Recorder) (string, error) {
	conf, err := b.settled(ctx, g, rec)
	if err != nil {
		return "", err
	}
	if conf.Lock != "" {
		return "", &providers.LockedError{Lock: providers.Lock{Lock: conf.Lock, Fix: unlockWords(g)}}
	}
	st, err := b.storageType(ctx, g.Host, conf.Storage)
	if err != nil {
		return "", err
	}
	note := "rolled back to " + ref.Ref
	if rollbackRule[st] == providers.WayRollbackNewestOnly {
		if !b.cfg.ZFSOrderForLiveChecksOnly {
			return "", &providers.RefusedError{Why: fmt.Sprintf("%s uses ZFS, whose restores are off until they are checked live: fork this snapshot instead.", g.Host)}
		}
		list, err := b.listSnapshots(ctx, g)
		if err != nil {
			return "", err
		}
		target := find(list, ref.Ref)
		if target == nil {
			return "", fmt.Errorf("snapshot %s of %s: %w", ref.Ref, g.Ref, providers.ErrNotFound)
		}
		newer := 0
		for _, s := range list {
			if s.Name != "current" && s.Name != ref.Ref && (s.SnapTime > target.SnapTime || s.SnapTime == target.SnapTime && newerThan(list, s.Name, ref.Ref)) {
				newer++
			}
		}
		if newer > 0 {
			return "", &providers.RefusedError{Why: ZFSRefusal(g.Host, newer)}
		}
	}
	upid, err := b.api.post(ctx, guestPath(g)+"/snapshot/"+ref.Ref+"/rollback", map[string]any{"start": 0})
	if err != nil {
		return "", fmt.Errorf("roll %s back to %s: %w", g.Ref, ref.Ref, err)
	}
	if _, err := b.api.wait(ctx, upid, rec); err != nil {
		var te *TaskError
		if errors.As(err, &te) {
			if le := lockError(g, te.ExitStatus); le != nil {
				return "", le
			}
			if strings.Contains(te.ExitStatus, "is not most recent snapshot") {
				return "", &providers.RefusedError{Why: ZFSRefusal(g.Host, 1) + " (" + te.ExitStatus + ")"}
			}
		}
		return "", fmt.Errorf("roll %s back to %s: %w", g.Ref, ref.Ref, err)
	}
	return note, nil
}

// Start starts the guest.
func (b *Backend) Start(ctx context.Context, g providers.Guest) error { return b.start(ctx, g, nil) }

// StartRecorded starts the guest, its task recorded with rec
// (providers.TaskStarter). A guest already running (a start called again
// after its task) is not started again: QEMU would run one more start
// task, failing "already running".
func (b *Backend) StartRecorded(ctx context.Context, g providers.Guest, rec providers.Recorder) error {
	if st, err := b.Status(ctx, g); err == nil && st.Running {
		return nil
	}
	return b.start(ctx, g, rec)
}

// StopRecorded stops the guest hard, its task recorded with rec
// (providers.TaskStopper). A guest already stopped is not stopped again:
// QEMU would run one more stop task each time.
func (b *Backend) StopRecorded(ctx context.Context, g providers.Guest, rec providers.Recorder) error {
	if st, err := b.Status(ctx, g); err == nil && !st.Running {
		if !st.Exists {
			return providers.ErrNotFound
		}
		return nil
	}
	return b.power(ctx, g, "stop", rec)
}

// Stop stops the guest hard (boxsnap's own hard stop, 1.3 s).
func (b *Backend) Stop(ctx context.Context, g providers.Guest) error {
	return b.power(ctx, g, "stop", nil)
}

// ProviderTask reads a task by its UPID after a restart.
func (b *Backend) ProviderTask(ctx context.Context, task providers.TaskRef) (providers.TaskOutcome, error) {
	st, err := b.api.task(ctx, task.ID)
	if err != nil {
		return providers.TaskOutcome{}, err
	}
	if st.Status != "stopped" {
		return providers.TaskOutcome{Running: true}, nil
	}
	return providers.TaskOutcome{OK: taskOK(st.ExitStatus), ExitStatus: st.ExitStatus}, nil
}

// taskListLimit is how many tasks one node's listing reads per sweep.
const taskListLimit = 500

// RecentTasks lists the tasks of every node since a time, newest first: one
// task list call per node (GET /nodes/{node}/tasks with source=all, so that
// running tasks show too), which the token's Sys.Audit on the node allows.
func (b *Backend) RecentTasks(ctx context.Context, since time.Time) ([]providers.Task, error) {
	var nodes []struct {
		Node   string `json:"node"`
		Status string `json:"status"`
	}
	if err := b.api.get(ctx, "/nodes", &nodes); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	var out []providers.Task
	var cut []string
	for _, n := range nodes {
		if n.Status != "online" {
			cut = append(cut, n.Node)
			continue
		}
		var tasks []struct {
			UPID      string `json:"upid"`
			Node      string `json:"node"`
			Type      string `json:"type"`
			ID        string `json:"id"`
			User      string `json:"user"`
			TokenID   string `json:"tokenid"`
			StartTime int64  `json:"starttime"`
			EndTime   int64  `json:"endtime"`
			Status    string `json:"status"`
		}
		path := fmt.Sprintf("/nodes/%s/tasks?source=all&since=%d&limit=%d", n.Node, since.Unix(), taskListLimit)
		if err := b.api.get(ctx, path, &tasks); err != nil {
			if errors.Is(err, providers.ErrUnreachable) {
				cut = append(cut, n.Node)
				continue
			}
			return nil, fmt.Errorf("list %s's tasks: %w", n.Node, err)
		}
		for _, t := range tasks {
			user := t.User
			if t.TokenID != "" {
				user += "!" + t.TokenID // a token's task: who ran it is the token
			}
			task := providers.Task{Ref: providers.TaskRef{Host: n.Node, ID: t.UPID}, Type: t.Type, Guest: t.ID, User: user,
				Start: time.Unix(t.StartTime, 0).UTC()}
			if t.EndTime > 0 && t.Status != "RUNNING" {
				end := time.Unix(t.EndTime, 0).UTC()
				task.End = &end
				task.Status = t.Status
			}
			out = append(out, task)
		}
	}
	if len(cut) > 0 {
		return out, &providers.HostsUnreachableError{Hosts: cut}
	}
	return out, nil
}
