package hosts

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// RunsWorkers says this process runs River's workers, so its beats record
// the host's workers as alive too (Working); a web process without them
// (serve --workers=false) records its host as seen only. Called before
// the first Seen.
func (h *Hosts) RunsWorkers() { h.works = true }

// seen records this process's host as seen at now, and its workers too
// when it runs them.
func (h *Hosts) seen(ctx context.Context) error {
	if h.works {
		return h.st.HostWorkerSeen(ctx, h.st.Pool, db.HostWorkerSeenParams{Name: h.host, At: h.now()})
	}
	return h.st.HostSeen(ctx, h.st.Pool, db.HostSeenParams{Name: h.host, At: h.now()})
}

// Working lists the hosts not marked gone whose workers beat within
// SeenAliveFor: the hosts whose own work (HostWork) is queued on their
// queues, since a host seen only through its web process would never run
// it.
func (h *Hosts) Working(ctx context.Context) ([]string, error) {
	rows, err := h.st.Hosts(ctx, h.st.Pool)
	if err != nil {
		return nil, fmt.Errorf("read the hosts: %w", err)
	}
	var out []string
	for _, r := range rows {
		if r.GoneAt == nil && h.working(r) {
			out = append(out, r.Name)
		}
	}
	return out, nil
}

// working says whether host r's workers beat within SeenAliveFor.
func (h *Hosts) working(r db.Host) bool {
	return r.WorkedAt != nil && h.now().Sub(*r.WorkedAt) < SeenAliveFor
}

// stranded fills in v what host r's queue holds that no live worker runs:
// the jobs waiting there, and, when some wait and r's workers did not beat
// lately, words that say so and what to do.
func (h *Hosts) stranded(ctx context.Context, r db.Host, v *Host) error {
	v.Working = h.working(r)
	n, err := h.st.HostQueueWaiting(ctx, h.st.Pool, operations.HostQueue(r.Name))
	if err != nil {
		return fmt.Errorf("count the jobs waiting for host %s: %w", r.Name, err)
	}
	v.Waiting = n
	if n > 0 && !v.Working && r.GoneAt == nil {
		v.Stranded = noWorkerWords(r.Name, n)
	}
	return nil
}
