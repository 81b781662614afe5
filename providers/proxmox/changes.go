package proxmox

import (
	"context"
	"errors"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// ChangeCadence: a Proxmox guest is checked every 10 minutes. A snapshot
// there is a task on the node (and on LVM-thin and ZFS it grows the pool as
// the guest writes), so a take every 15 seconds would load the node and
// fill its list of snapshots.
func (b *Backend) ChangeCadence() providers.Cadence {
	return providers.Cadence{Every: 10 * time.Minute,
		Why: "a Proxmox snapshot is a task on the node, and the API cannot say whether a disk changed"}
}

// Changes reads the guest's status (one API call) and answers
// ChangedUnknown: Proxmox's API has no question for "did the disk change
// since this snapshot", so the core takes an automatic snapshot at the
// cadence.
func (b *Backend) Changes(ctx context.Context, g providers.Guest) (providers.ChangeCheck, error) {
	var st struct {
		Status string `json:"status"`
	}
	err := b.api.get(ctx, guestPath(g)+"/status/current", &st)
	if errors.Is(err, providers.ErrNotFound) {
		return providers.ChangeCheck{}, nil
	}
	if err != nil {
		return providers.ChangeCheck{}, err
	}
	return providers.ChangeCheck{Exists: true, Running: st.Status == "running", Changed: providers.ChangedUnknown,
		Why: "Proxmox cannot tell without a snapshot"}, nil
}
