package hosts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// carriedSpec is what b's guest is made with on this host before it is
// restored from sn: how b ran when sn was taken, as the backend recorded
// it in sn (its command, user, limits and network, and whether it ran:
// a box that ran starts on this host once restored), else as carriedRun
// says; with carriedRun's environment, which no snapshot records. Never
// its published ports: on this host they could be another's.
func (h *Hosts) carriedSpec(ctx context.Context, b *snapshots.Box, be snapshots.Backend, sn *snapshots.Snapshot) (providers.BoxSpec, error) {
	spec := providers.BoxSpec{}
	recorded := false
	if c, ok := be.Snap.(providers.Carried); ok {
		var err error
		if spec, recorded, err = c.CarriedSpec(ctx, snapshots.RefOf(sn, b)); err != nil {
			return spec, fmt.Errorf("read how box %s ran from snapshot %s: %w", b.Name, sn.Name, err)
		}
	}
	spec.Box = providers.BoxIdentity{ID: b.GuestRef, Name: b.Name, Kind: b.Kind}
	spec.Publish = nil
	run, err := h.carriedRun(ctx, b)
	if err != nil {
		return spec, err
	}
	spec.Env = run.Env
	if !recorded {
		spec.Command, spec.User, spec.Limits, spec.NoNetwork = run.Command, run.User, run.Limits, run.NoNetwork
	}
	return spec, nil
}

// CarriedEnv is the environment b runs with on a host that holds no
// record of it (carriedRun's): a move's, and a fork's of one of b's
// snapshots asked on another host than b's own, so a fork on any host
// runs with its source box's, as one on b's host does. It is read only to
// make a box: errors never carry it, nor does any log line.
func (h *Hosts) CarriedEnv(ctx context.Context, b *snapshots.Box) (map[string]string, error) {
	run, err := h.carriedRun(ctx, b)
	return run.Env, err
}

// carriedRun is how b runs as the database recorded it when b was made or
// last reset (recordedRun), else as what b was made from says (its
// command, and its box template's user, environment, limits and network
// as the template is now, when it still exists); the zero run when
// neither is known.
func (h *Hosts) carriedRun(ctx context.Context, b *snapshots.Box) (snapshots.BoxRun, error) {
	run, made, err := h.recordedRun(ctx, b)
	if err != nil || made {
		run.Env = maps.Clone(run.Env)
		return run, err
	}
	mf, err := h.st.MadeFromByBox(ctx, h.st.Pool, b.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return snapshots.BoxRun{}, nil
	}
	if err != nil {
		return snapshots.BoxRun{}, fmt.Errorf("read what box %s was made from: %w", b.Name, err)
	}
	run = snapshots.BoxRun{Command: mf.Command}
	if mf.Template == "" || h.templates == nil {
		return run, nil
	}
	t, err := h.templates.Template(ctx, mf.Template)
	if err != nil {
		return run, nil // the template is gone: the box runs with no environment
	}
	run.User, run.Env, run.Limits, run.NoNetwork = t.User, maps.Clone(t.Env), t.Limits, t.NoNetwork
	return run, nil
}

// forkDepth bounds how many forks back a box's run is looked for: a fork
// records no run of its own and runs as its source box did.
const forkDepth = 16

// recordedRun is how b runs as the database recorded it when b was made
// (snapshots.BoxRun), or, for a fork, when the box it was forked from (or
// that box's source) was made; ok is false when none was recorded, as for
// a box made before runs were. Errors never carry the run, whose
// environment may hold secrets.
func (h *Hosts) recordedRun(ctx context.Context, b *snapshots.Box) (run snapshots.BoxRun, ok bool, err error) {
	id, from := b.ID, b.ForkedFrom
	for range forkDepth {
		raw, err := h.st.BoxRunByBox(ctx, h.st.Pool, id)
		if err == nil {
			if run, err = snapshots.UnmarshalRun(raw); err != nil {
				return run, false, fmt.Errorf("read how box %s runs: its record is not a run", b.Name)
			}
			return run, true, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return run, false, fmt.Errorf("read how box %s runs: %w", b.Name, err)
		}
		var f struct {
			Box string `json:"box"`
		}
		if len(from) == 0 || json.Unmarshal(from, &f) != nil || f.Box == "" {
			return run, false, nil
		}
		src, err := h.st.CoreBoxByID(ctx, h.st.Pool, f.Box)
		if errors.Is(err, pgx.ErrNoRows) {
			return run, false, nil
		}
		if err != nil {
			return run, false, fmt.Errorf("read the box %s was forked from: %w", b.Name, err)
		}
		id, from = src.ID, src.ForkedFrom
	}
	return run, false, nil
}
