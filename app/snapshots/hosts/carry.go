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
// a box that ran starts on this host once restored), else as the database
// recorded it when b was made (recordedRun), else what b was made from
// (its command, and its box template's user, limits and network as the
// template is now); with the environment the database recorded when b
// was made, or, for a box made before that was recorded, its box
// template's as it is now, when it still exists. Never its published
// ports: on this host they could be another's.
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
	run, made, err := h.recordedRun(ctx, b)
	if err != nil {
		return spec, err
	}
	if made {
		spec.Env = maps.Clone(run.Env)
		if !recorded {
			spec.Command, spec.User, spec.Limits, spec.NoNetwork = run.Command, run.User, run.Limits, run.NoNetwork
		}
		return spec, nil
	}
	mf, err := h.st.MadeFromByBox(ctx, h.st.Pool, b.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return spec, nil
	}
	if err != nil {
		return spec, fmt.Errorf("read what box %s was made from: %w", b.Name, err)
	}
	if !recorded {
		spec.Command = mf.Command
	}
	if mf.Template == "" || h.templates == nil {
		return spec, nil
	}
	t, err := h.templates.Template(ctx, mf.Template)
	if err != nil {
		return spec, nil // the template is gone: the box runs with no environment
	}
	spec.Env = maps.Clone(t.Env)
	if !recorded {
		spec.User, spec.Limits, spec.NoNetwork = t.User, t.Limits, t.NoNetwork
	}
	return spec, nil
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
