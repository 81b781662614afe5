package qemu

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/digitalocean/go-libvirt"

	"github.com/boxsnap/boxsnap/providers"
)

// The scan for restores made outside boxsnap (providers.TaskLister): the
// reverts the marks of outsidemark.go show, the snapshots taken outside
// boxsnap, and those deleted outside it.

// Task types a QEMU box's outside changes are listed under: what a person
// would have run.
const (
	TaskRevert   = providers.TaskVirshRevert
	TaskSnapshot = providers.TaskVirshSnapshot
	TaskDelete   = providers.TaskVirshDelete
)

var _ providers.TaskLister = (*Backend)(nil)

// RecentTasks lists, for each domain of this install on this host's
// libvirtd, the reverts and snapshot deletes made outside boxsnap a scan
// found since, and the snapshots taken outside boxsnap since
// (outsidemark.go says what it can and cannot see). A revert is listed
// ended OK, at the time a scan first saw it; it is never a running or a
// failed one, as libvirt's revert is one call that either happened or did
// not.
func (b outside) RecentTasks(ctx context.Context, since time.Time) ([]providers.Task, error) {
	l, err := b.conn(ctx)
	if err != nil {
		return nil, err
	}
	doms, err := b.ownDomains(l)
	if err != nil {
		return nil, err
	}
	var out []providers.Task
	for _, d := range doms {
		tasks, err := b.domainTasks(l, d, since)
		if libvirt.IsNotFound(err) {
			continue // released since the listing
		}
		if err != nil {
			return out, err
		}
		out = append(out, tasks...)
	}
	return out, nil
}

// ownDomains lists this install's boxes' domains on l: those whose
// metadata names this install and whose disk lies in the backend's folder
// (another install's, or a person's, are none of boxsnap's). A domain gone
// between the listing and the read of its definition is left out; one that
// cannot be read fails the listing, as leaving it out would say it is gone.
func (b outside) ownDomains(l *libvirt.Libvirt) ([]libvirt.Domain, error) {
	doms, _, err := l.ConnectListAllDomains(1, 0)
	if err != nil {
		return nil, fmt.Errorf("list domains: %v: %w", err, providers.ErrUnreachable)
	}
	var out []libvirt.Domain
	for _, d := range doms {
		x, err := b.readDomain(l, d)
		if libvirt.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if x.Metadata.Box == nil || x.Metadata.Box.Install != b.cfg.Install {
			continue
		}
		if len(x.Devices.Disks) > 0 && !strings.HasPrefix(x.Devices.Disks[0].Source.File, b.cfg.Dir+"/") {
			continue
		}
		out = append(out, d)
	}
	return out, nil
}

// domainTasks scans one domain.
func (b outside) domainTasks(l *libvirt.Libvirt, d libvirt.Domain, since time.Time) ([]providers.Task, error) {
	snaps, _, err := l.DomainListAllSnapshots(d, 1, 0)
	if err != nil {
		return nil, fmt.Errorf("list snapshots of %s: %w", d.Name, err)
	}
	names := make([]string, 0, len(snaps))
	var out []providers.Task
	for _, s := range snaps {
		names = append(names, s.Name)
		sx, err := b.readSnapshot(l, s)
		if isNoSnapshot(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if _, ours := sx.label(); ours || sx.takenAt().Before(since) {
			continue
		}
		at := sx.takenAt()
		out = append(out, providers.Task{Ref: providers.TaskRef{ID: "snapshot " + s.Name + " of " + d.Name + " at " + at.Format(time.RFC3339)},
			Type: TaskSnapshot, Guest: d.Name, Target: s.Name, Start: at, End: &at, Status: "OK"})
	}
	var r outsideRecord
	err = b.locked(func() error {
		rec, known, err := b.readRecord(d.Name)
		if err != nil {
			return err
		}
		r = rec
		return b.scanMarks(l, d, &r, known, names)
	})
	if err != nil {
		return nil, err
	}
	for _, f := range r.Reverts {
		if f.Seen.Before(since) {
			continue
		}
		seen, typ := f.Seen, TaskRevert
		if f.Deleted {
			typ = TaskDelete
		}
		out = append(out, providers.Task{Ref: providers.TaskRef{ID: f.ID}, Type: typ, Guest: d.Name, Target: f.Snapshot,
			Start: seen, End: &seen, Status: "OK", FirstSeen: true})
	}
	return out, nil
}

// scanMarks finds in r, under the lock, the snapshots deleted outside
// boxsnap since the record's names were written and a revert made since
// its mark, and writes a fresh mark where either, or a first scan, or a
// snapshot taken since, asks for one.
func (b outside) scanMarks(l *libvirt.Libvirt, d libvirt.Domain, r *outsideRecord, known bool, names []string) error {
	// A snapshot the record names that is gone, which boxsnap did not
	// delete (its delete drops it from the record: forget).
	if known {
		for _, n := range r.Snapshots {
			if !slices.Contains(names, n) {
				if err := r.found("delete", d.Name, n, true); err != nil {
					return err
				}
			}
		}
	}
	found, err := b.notice(l, d, r, known)
	if err != nil {
		return err
	}
	// A first scan writes the domain's first mark; a revert found gets a
	// fresh one, so a second revert to the same snapshot is seen; and a
	// snapshot taken since holds the mark on the domain now, so a fresh
	// one tells a revert to it apart.
	if !known || found || !sameNames(names, r.Snapshots) {
		r.Snapshots = names
		if _, err := b.newMark(l, d, *r); err != nil {
			return err
		}
	}
	return nil
}

func sameNames(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	in := make(map[string]bool, len(a))
	for _, n := range a {
		in[n] = true
	}
	for _, n := range b {
		if !in[n] {
			return false
		}
	}
	return true
}
