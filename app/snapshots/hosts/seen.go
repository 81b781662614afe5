package hosts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// Host is one host as the pages, the API and the CLI show it.
type Host struct {
	Name      string     `json:"name"`
	FirstSeen time.Time  `json:"firstSeen"`
	LastSeen  time.Time  `json:"lastSeen"`
	GoneAt    *time.Time `json:"goneAt,omitempty"`
	// Alive is whether it was seen within SeenAliveFor.
	Alive bool `json:"alive"`
	// This is whether it is the host that answered.
	This bool `json:"this"`
	// Boxes is how many boxes it owns.
	Boxes int64 `json:"boxes"`
	// Working is whether a process with workers on it beat within
	// SeenAliveFor; Waiting is how many jobs wait in its queue; Stranded
	// says, when some wait and none of its workers is alive, that nothing
	// runs them and what to do.
	Working  bool   `json:"working"`
	Waiting  int64  `json:"waiting"`
	Stranded string `json:"stranded,omitempty"`
}

// Seen records this process's host as seen now; a host marked gone that is
// seen again is no longer gone.
func (h *Hosts) Seen(ctx context.Context) error {
	if err := h.seen(ctx); err != nil {
		return fmt.Errorf("record host %s as seen: %w", h.host, err)
	}
	return nil
}

// Beat records this process's host as seen now and every BeatEvery until
// ctx ends; a failed beat is logged and the next one tries again.
func (h *Hosts) Beat(ctx context.Context) {
	t := time.NewTicker(BeatEvery)
	defer t.Stop()
	for {
		if err := h.Seen(ctx); err != nil && ctx.Err() == nil {
			h.logger.Warn("host beat", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// List is every host that ran boxsnap on this database, by name.
func (h *Hosts) List(ctx context.Context, c snapshots.Caller) ([]Host, error) {
	if !c.IsPerson() {
		return nil, &snapshots.Refusal{Code: snapshots.CodeForbidden, Words: hostsPersonOnlyWords}
	}
	rows, err := h.st.Hosts(ctx, h.st.Pool)
	if err != nil {
		return nil, fmt.Errorf("read the hosts: %w", err)
	}
	out := make([]Host, 0, len(rows))
	for _, r := range rows {
		v, err := h.view(ctx, r)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Get is one host by name; ErrNoRows wrapped when there is none.
func (h *Hosts) get(ctx context.Context, q db.DBTX, name string) (db.Host, error) {
	r, err := h.st.HostByName(ctx, q, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, err
	}
	if err != nil {
		return r, fmt.Errorf("read host %s: %w", name, err)
	}
	return r, nil
}

func (h *Hosts) view(ctx context.Context, r db.Host) (Host, error) {
	n, err := h.st.HostBoxCount(ctx, h.st.Pool, &r.Name)
	if err != nil {
		return Host{}, fmt.Errorf("count host %s's boxes: %w", r.Name, err)
	}
	v := Host{Name: r.Name, FirstSeen: r.FirstSeenAt, LastSeen: r.LastSeenAt, GoneAt: r.GoneAt,
		Alive: h.now().Sub(r.LastSeenAt) < SeenAliveFor, This: r.Name == h.host, Boxes: n}
	return v, h.stranded(ctx, r, &v)
}

// mayGoTo refuses a host boxes cannot go to: one not recorded, or one
// marked gone.
func (h *Hosts) mayGoTo(ctx context.Context, to string) error {
	target, err := h.get(ctx, h.st.Pool, to)
	if errors.Is(err, pgx.ErrNoRows) {
		return &snapshots.Refusal{Code: snapshots.CodeNotFound, Words: unknownHostWords(to)}
	}
	if err != nil {
		return err
	}
	if target.GoneAt != nil {
		return &snapshots.Refusal{Code: snapshots.CodeConflict, Words: hostGoneWords(to)}
	}
	return nil
}

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
		if r.GoneAt == nil && workersAlive(r, h.now()) {
			out = append(out, r.Name)
		}
	}
	return out, nil
}

// workersAlive says whether host r's workers beat within SeenAliveFor of
// now.
func workersAlive(r db.Host, now time.Time) bool {
	return r.WorkedAt != nil && now.Sub(*r.WorkedAt) < SeenAliveFor
}

// stranded fills in v what host r's queue holds that no live worker runs
// (strandedOf).
func (h *Hosts) stranded(ctx context.Context, r db.Host, v *Host) error {
	var err error
	v.Working, v.Waiting, v.Stranded, err = strandedOf(ctx, h.st, r, h.now())
	return err
}

// strandedOf is whether host r's workers beat within SeenAliveFor of now,
// how many jobs wait in its queue, and, when some wait, none of its
// workers is alive and r is not marked gone, words that say so and what
// to do.
func strandedOf(ctx context.Context, st *store.Store, r db.Host, now time.Time) (working bool, waiting int64, words string, err error) {
	working = workersAlive(r, now)
	waiting, err = st.HostQueueWaiting(ctx, st.Pool, operations.HostQueue(r.Name))
	if err != nil {
		return working, 0, "", fmt.Errorf("count the jobs waiting for host %s: %w", r.Name, err)
	}
	if waiting > 0 && !working && r.GoneAt == nil {
		words = noWorkerWords(r.Name, waiting)
	}
	return working, waiting, words, nil
}

// Stranded is, for boxsnap doctor, what each host's queue holds that no
// live worker of it runs, in words, a host a line; none when every host
// with jobs waiting has a live worker.
func Stranded(ctx context.Context, st *store.Store, now time.Time) ([]string, error) {
	rows, err := st.Hosts(ctx, st.Pool)
	if err != nil {
		return nil, fmt.Errorf("read the hosts: %w", err)
	}
	var out []string
	for _, r := range rows {
		_, _, words, err := strandedOf(ctx, st, r, now)
		if err != nil {
			return out, err
		}
		if words != "" {
			out = append(out, words)
		}
	}
	return out, nil
}
