package providers

import "context"

// TaskReleaser is a Boxes whose guest's release runs provider tasks (a
// Proxmox stop and destroy) it can leave to the core: each task is
// recorded with rec before it is waited for, and a recorder that takes the
// wait upon itself answers ErrTaskPending at once. Called again once the
// task ended, it goes on from where the guest is: a guest already stopped
// is destroyed, one already gone is released.
type TaskReleaser interface {
	ReleaseRecorded(ctx context.Context, guest Guest, rec Recorder) error
}

// TaskStarter is a Boxes whose guest's start runs a provider task it can
// leave to the core, as TaskReleaser's: called again once the task ended,
// a guest already running is started, and no second start task starts.
type TaskStarter interface {
	StartRecorded(ctx context.Context, guest Guest, rec Recorder) error
}

// TaskStopper is a Boxes whose guest's stop runs a provider task it can
// leave to the core, as TaskReleaser's: called again once the task ended,
// a guest already stopped is stopped, and no second stop task starts.
type TaskStopper interface {
	StopRecorded(ctx context.Context, guest Guest, rec Recorder) error
}
