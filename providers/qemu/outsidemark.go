package qemu

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/digitalocean/go-libvirt"
)

// libvirt keeps no task history, so the backend keeps a little of its own
// for the scan of restores made outside boxsnap (providers.TaskLister).
//
// A revert: libvirt replaces the domain's definition with the one the
// snapshot saved, its metadata with it, whether the guest runs or not (a
// revert of a stopped guest to a disk snapshot leaves no "from snapshot"
// state reason on libvirt 9, so the state reason alone would miss it). So
// each domain of this install carries a mark of boxsnap's own in its
// metadata, a random word, written anew after each of boxsnap's takes and
// reverts and whenever the scan finds the domain's snapshots changed; this
// host's data folder keeps the word last written (<domain>.outside.json).
// A scan that finds another word on the domain (an older one, or none)
// knows a revert was made since, to the domain's current snapshot
// (DomainSnapshotCurrent): boxsnap's own when its revert said so first,
// else one made outside boxsnap, which it records as a task ("virsh
// revert") named by a random word of its own, and writes a fresh mark, so
// that revert is logged once and a second revert to the same snapshot
// later again. boxsnap's own take or revert first notices a revert its
// fresh mark would hide (beforeOwn).
//
// What it cannot see: who reverted, and when (the task's time is when a
// scan first saw it, said as such); two reverts between two scans are one;
// a revert to a snapshot taken outside boxsnap before any scan saw that
// snapshot (it holds the word still on the domain); and a revert whose
// domain was then defined again from its XML by hand. A domain's first
// scan only writes its mark.
//
// A snapshot taken outside boxsnap is one without boxsnap's label, listed
// as a task ("virsh snapshot") at its own creation time. A snapshot the
// record names (the domain's snapshots when its mark was last written by a
// scan) that is gone, and that boxsnap's own delete did not drop from the
// record (forget), was deleted outside boxsnap: a "virsh delete" task, at
// the time a scan first saw it. One taken and deleted between two scans
// is not seen; a scan that reads the list while boxsnap's delete runs in
// another process may find that delete as made outside.

// outsideNS is the namespace of the mark in a domain's metadata.
const outsideNS = "https://boxsnap.dev/libvirt/qemu/seen/1"

// outsideKeep is how long a revert found stays in a domain's record.
const outsideKeep = 48 * time.Hour

// outsideRecord is what this host keeps of a domain between scans.
type outsideRecord struct {
	// Mark is the word last written on the domain.
	Mark string `json:"mark"`
	// Snapshots are the domain's snapshots' names when it was written.
	Snapshots []string `json:"snapshots,omitempty"`
	// Ours names the snapshot boxsnap's own revert goes to, while it runs.
	Ours string `json:"ours,omitempty"`
	// Reverts are the reverts, and the deletes, made outside boxsnap found
	// lately.
	Reverts []foundRevert `json:"reverts,omitempty"`
}

// foundRevert is a revert made outside boxsnap, or with Deleted a
// snapshot deleted outside boxsnap, as a scan found it.
type foundRevert struct {
	ID       string    `json:"id"`
	Snapshot string    `json:"snapshot"`
	Seen     time.Time `json:"seen"`
	Deleted  bool      `json:"deleted,omitempty"`
}

// found adds a change found now to r, named by a random word.
func (r *outsideRecord) found(what, domain, snapshot string, deleted bool) error {
	var w [9]byte
	if _, err := rand.Read(w[:]); err != nil {
		return err
	}
	r.Reverts = append(r.Reverts, foundRevert{ID: what + " of " + domain + " " + hex.EncodeToString(w[:]), Snapshot: snapshot,
		Seen: time.Now().UTC(), Deleted: deleted})
	return nil
}

// seenElement is the mark as libvirt answers it.
type seenElement struct {
	XMLName xml.Name `xml:"seen"`
	Mark    string   `xml:"mark,attr"`
}

// locked runs f holding this host's lock on the domains' records, so a
// scan and a take or a revert, in this process or another on the same data
// folder, never both find one revert, nor write over each other's record.
func (b outside) locked(f func() error) error {
	lf, err := os.OpenFile(filepath.Join(b.cfg.Dir, ".outside.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("lock what boxsnap saw of its domains: %w", err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock what boxsnap saw of its domains: %w", err)
	}
	return f()
}

func (b outside) recordPath(domain string) string {
	return filepath.Join(b.cfg.Dir, domain+".outside.json")
}

func (b outside) readRecord(domain string) (outsideRecord, bool, error) {
	var r outsideRecord
	raw, err := os.ReadFile(b.recordPath(domain))
	if errors.Is(err, os.ErrNotExist) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("read what boxsnap saw of %s: %w", domain, err)
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, false, fmt.Errorf("read what boxsnap saw of %s: %w", domain, err)
	}
	return r, true, nil
}

// writeRecord writes the record whole or not at all.
func (b outside) writeRecord(domain string, r outsideRecord) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	part := b.recordPath(domain) + ".part"
	if err := os.WriteFile(part, raw, 0o600); err != nil {
		return fmt.Errorf("write what boxsnap saw of %s: %w", domain, err)
	}
	if err := os.Rename(part, b.recordPath(domain)); err != nil {
		return fmt.Errorf("write what boxsnap saw of %s: %w", domain, err)
	}
	return nil
}

// readMark reads the mark on the domain as it is now (its running
// definition while it runs), "" where it has none.
func readMark(l *libvirt.Libvirt, d libvirt.Domain) (string, error) {
	s, err := l.DomainGetMetadata(d, int32(libvirt.DomainMetadataElement), libvirt.OptString{outsideNS}, 0)
	var e libvirt.Error
	if errors.As(err, &e) && e.Code == uint32(libvirt.ErrNoDomainMetadata) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s's mark: %w", d.Name, err)
	}
	var m seenElement
	if err := xml.Unmarshal([]byte(s), &m); err != nil {
		return "", fmt.Errorf("read %s's mark: %w", d.Name, err)
	}
	return m.Mark, nil
}

// newMark writes a fresh mark on the domain (its running definition and
// its saved one) and in its record, which keeps its reverts found; it
// answers the mark.
func (b outside) newMark(l *libvirt.Libvirt, d libvirt.Domain, r outsideRecord) (string, error) {
	var w [9]byte
	if _, err := rand.Read(w[:]); err != nil {
		return "", err
	}
	mark := hex.EncodeToString(w[:])
	r.Mark = mark
	kept := r.Reverts[:0]
	for _, f := range r.Reverts {
		if time.Since(f.Seen) < outsideKeep {
			kept = append(kept, f)
		}
	}
	r.Reverts = kept
	if err := b.writeRecord(d.Name, r); err != nil {
		return "", err
	}
	flags := libvirt.DomainAffectConfig
	if on, err := runs(l, d); err != nil {
		return "", err
	} else if on {
		flags |= libvirt.DomainAffectLive
	}
	el := fmt.Sprintf(`<seen mark="%s"/>`, mark)
	if err := l.DomainSetMetadata(d, int32(libvirt.DomainMetadataElement), libvirt.OptString{el}, libvirt.OptString{"boxsnapseen"}, libvirt.OptString{outsideNS}, flags); err != nil {
		return "", fmt.Errorf("mark %s: %w", d.Name, err)
	}
	return mark, nil
}

// notice records in r a revert made since the mark r keeps was written:
// the domain's mark is another. It answers whether it found one (boxsnap's
// own, r.Ours, is found but not recorded); r's Mark is then the domain's.
// A domain that has no record yet has nothing to notice.
func (b outside) notice(l *libvirt.Libvirt, d libvirt.Domain, r *outsideRecord, known bool) (bool, error) {
	if !known {
		return false, nil
	}
	mark, err := readMark(l, d)
	if err != nil || mark == r.Mark {
		return false, err
	}
	cur, err := l.DomainSnapshotCurrent(d, 0)
	target := cur.Name
	if isNoSnapshot(err) {
		target = ""
	} else if err != nil {
		return false, fmt.Errorf("the current snapshot of %s: %w", d.Name, err)
	}
	if r.Ours == "" || r.Ours != target {
		if err := r.found("revert", d.Name, target, false); err != nil {
			return false, err
		}
	}
	r.Mark, r.Ours = mark, ""
	return true, nil
}

// beforeOwn notices, before boxsnap's own take or revert, a revert made
// outside boxsnap since the last scan, which the fresh mark written after
// it would otherwise hide, and a take would make another snapshot current.
// ours names the snapshot boxsnap's own revert goes to ("" for a take), so
// a scan that finds the domain reverted before its fresh mark is written
// knows the revert was boxsnap's.
func (b outside) beforeOwn(l *libvirt.Libvirt, d libvirt.Domain, ours string) error {
	return b.locked(func() error {
		r, known, err := b.readRecord(d.Name)
		if err != nil {
			return err
		}
		found, err := b.notice(l, d, &r, known)
		if err != nil || !found && ours == "" {
			return err
		}
		r.Ours = ours
		return b.writeRecord(d.Name, r)
	})
}

// forget drops a snapshot boxsnap deleted from the names the record keeps,
// so a scan does not find it deleted outside boxsnap.
func (b outside) forget(domain, snapshot string) error {
	return b.locked(func() error {
		r, known, err := b.readRecord(domain)
		if err != nil || !known {
			return err
		}
		i := slices.Index(r.Snapshots, snapshot)
		if i < 0 {
			return nil
		}
		r.Snapshots = slices.Delete(r.Snapshots, i, i+1)
		return b.writeRecord(domain, r)
	})
}

// markAfterOwn writes a fresh mark after boxsnap's own take or revert, so
// that a later revert to any snapshot taken before it is seen; boxsnap's
// revert has ended.
func (b outside) markAfterOwn(l *libvirt.Libvirt, d libvirt.Domain) error {
	return b.locked(func() error {
		r, _, err := b.readRecord(d.Name)
		if err != nil {
			return err
		}
		r.Ours = ""
		_, err = b.newMark(l, d, r)
		return err
	})
}
