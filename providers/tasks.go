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
