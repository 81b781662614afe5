package pagemodel

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// KindPlan is what one backend does for one kind of box on one host: the
// table's answer (Snapshotting) and, where a live box of that kind is
// there, a real plan read through it, so the line says what the
// backend itself says.
type KindPlan struct {
	Backend  snapshots.Backend
	Kind     string
	Host     string // the host's name, "" for a backend without hosts
	Box      *snapshots.Box
	Snapping *providers.Snapshotting
	Plan     providers.SnapshotPlan
	Err      error
	Planned  bool
}

// hostName is a box's host as the line under the tabs says it: "pve-1",
// or the backend's label ("this host") where it has no hosts of its own.
func hostName(be snapshots.Backend, b *snapshots.Box) string {
	if b != nil && b.Host != "" && be.Kind != "local" {
		return b.Host
	}
	return be.Label
}

// commonKinds are the kinds a backend is asked about when it has no live
// box to ask for.
var commonKinds = [...]string{"linux", "lxc", "qemu", "qemu-windows"}

// KindPlans reads one plan per backend, kind and host, each through one
// live box there (cached planCacheFor); a backend with no live box gets
// one row per kind it offers snapshots for, from its table alone.
func (rb *RowBuilder) KindPlans(ctx context.Context, boxes []*snapshots.Box) []KindPlan {
	var out []KindPlan
	for _, be := range rb.core.Backends() {
		seen := map[string]bool{}
		for _, b := range boxes {
			if b.BackendID != be.ID || b.ReleasedAt != nil || b.State != snapshots.BoxReady {
				continue
			}
			host := hostName(be, b)
			key := b.Kind + "\x00" + host
			if seen[key] {
				continue
			}
			seen[key] = true
			kp := KindPlan{Backend: be, Kind: b.Kind, Host: host, Box: b, Snapping: be.Snapshotting(b.Kind)}
			if kp.Snapping != nil {
				kp.Plan, kp.Err = rb.plans.boxPlan(ctx, rb.core, b)
				kp.Planned = true
			}
			out = append(out, kp)
		}
		if len(seen) > 0 {
			continue
		}
		// No live box: what the backend offers for each kind, once for
		// kinds it treats alike.
		offered := map[string]bool{}
		for _, k := range commonKinds {
			sn := be.Snapshotting(k)
			if sn == nil || offered[offersWords(sn)] {
				continue
			}
			offered[offersWords(sn)] = true
			out = append(out, KindPlan{Backend: be, Kind: k, Host: hostName(be, nil), Snapping: sn})
		}
		if len(offered) == 0 {
			out = append(out, KindPlan{Backend: be, Host: hostName(be, nil)})
		}
	}
	return out
}

// KindWords names a kind as the badges do: "LXC", "QEMU", "Windows (QEMU)".
func KindWords(kind string) string {
	switch kind {
	case "linux":
		return "Linux"
	case "lxc":
		return "LXC"
	case "qemu":
		return "QEMU"
	case "qemu-windows":
		return "Windows (QEMU)"
	case "docker":
		return "Docker"
	}
	return kind
}

// planOffers is a row's offers with what its plan reads: a restore the
// storage turns off ("restores off until checked" on ZFS), and the storage.
func planOffers(kp KindPlan) string {
	w := offersWords(kp.Snapping)
	if !kp.Planned || kp.Err != nil && !isLocked(kp.Err) {
		return w
	}
	p := kp.Plan
	switch {
	case !p.Take.OK && p.Restore.Way == providers.WayNone && !p.Take.TryAgain:
		w = "No snapshots on this storage"
	case p.Restore.Way == providers.WayNone:
		w = strings.Replace(w, "restores any", "no restores", 1)
	case p.Restore.Why != "":
		w = strings.Replace(w, "restores any", "restores off until checked", 1)
	case p.Restore.Way == providers.WayRollbackNewestOnly:
		w = strings.Replace(w, "restores any", "restores the newest", 1)
	}
	return w
}

func isLocked(err error) bool {
	var le *providers.LockedError
	return errors.As(err, &le)
}

// storageWords names a plan's storage and how full it is: "local-lvm
// (lvmthin), 7% full".
func storageWords(st providers.Storage) string {
	if st.Name == "" {
		return ""
	}
	// A local store's name is a folder: its path is no one's business on
	// this page, its file system is.
	w := st.Name
	switch {
	case strings.HasPrefix(st.Name, "/") && st.Type != "":
		w = st.Type
	case strings.HasPrefix(st.Name, "/"):
		w = "its store"
	case st.Type != "":
		w += " (" + st.Type + ")"
	}
	return fmt.Sprintf("%s, %.0f%% full", w, st.PercentFull)
}

// hostNeeds is what needs the owner on each host, for the line under the
// tabs, in amber: a host that cannot take snapshots, and storage past the
// room setting. One plan per host, through one box there.
func (rb *RowBuilder) hostNeeds(ctx context.Context, room int) []string {
	boxes, err := rb.tab.LiveBoxPerKind(ctx)
	if err != nil {
		return []string{"boxsnap could not read the boxes: " + err.Error()}
	}
	var needs []string
	said := map[string]bool{}
	say := func(w string) {
		if !said[w] {
			said[w] = true
			needs = append(needs, w)
		}
	}
	cannot := map[string]bool{}
	can := map[string]bool{}
	for _, kp := range rb.KindPlans(ctx, boxes) {
		where := kp.Host
		if where == "" {
			where = kp.Backend.Label
		}
		switch {
		case kp.Snapping == nil:
			cannot[where] = true
		case !kp.Planned:
			can[where] = true
		case kp.Err != nil && !isLocked(kp.Err):
			cannot[where] = true
		case !kp.Plan.Take.OK && !kp.Plan.Take.TryAgain:
			cannot[where] = true
		default:
			can[where] = true
		}
		if kp.Planned && kp.Plan.Storage.Name != "" && kp.Plan.Storage.PercentFull > float64(room) {
			say(fmt.Sprintf("%s's storage is %.0f%% full", where, kp.Plan.Storage.PercentFull))
		}
	}
	var hosts []string
	for h := range cannot {
		if !can[h] {
			hosts = append(hosts, h)
		}
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		say(h + " cannot take snapshots")
	}
	return needs
}
