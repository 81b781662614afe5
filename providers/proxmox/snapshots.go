package proxmox

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// Labels: a snapshot's name on Proxmox is NamePrefix and boxsnap's ID, within
// Proxmox's rules (2 to 40 characters, ^[a-z][a-z0-9_-]+$); its description
// says the install, box, snapshot, keep date and identity reset version, and
// nothing else.
const (
	NamePrefix  = "bx"
	labelPrefix = "boxsnap install "
	// ResetTagPrefix is the guest tag an image with the identity reset
	// carries, with its version: "boxsnap-reset-1".
	ResetTagPrefix = "boxsnap-reset-"
	maxSnapName    = 40
)

var snapNameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]+$`)

// SnapshotName is the name boxsnap gives snapshot id on Proxmox.
func SnapshotName(id string) (string, error) {
	n := NamePrefix + strings.ToLower(id)
	if len(n) < 2 || len(n) > maxSnapName || !snapNameRE.MatchString(n) {
		return "", fmt.Errorf("snapshot ID %q makes no valid Proxmox snapshot name", id)
	}
	return n, nil
}

// Describe writes a label as a snapshot's description.
func Describe(l providers.Label) string {
	kept := "no"
	if l.KeptUntil != nil {
		kept = l.KeptUntil.UTC().Format(time.RFC3339)
	}
	d := fmt.Sprintf("boxsnap install %s box %s snapshot %s kept %s reset %d", l.Install, l.Box, l.Snapshot, kept, l.ResetVersion)
	if l.Held != "" {
		// A held copy's label also says what it copies, when, and of what
		// kind of box, so one found again still forks.
		at := int64(0)
		if l.SnapshotAt != nil {
			at = l.SnapshotAt.Unix()
		}
		kind := l.Kind
		if kind == "" {
			kind = "unknown"
		}
		d += fmt.Sprintf(" held %s taken %d kind %s", l.Held, at, kind)
	}
	return d
}

// ParseLabel reads a description Describe wrote; ok is false for any other.
func ParseLabel(desc string) (providers.Label, bool) {
	var l providers.Label
	f := strings.Fields(strings.TrimSpace(desc))
	if len(f) < 7 || f[0] != "boxsnap" || len(f)%2 != 1 {
		return l, false
	}
	for i := 1; i+1 < len(f); i += 2 {
		v := f[i+1]
		switch f[i] {
		case "install":
			l.Install = v
		case "box":
			l.Box = v
		case "snapshot":
			l.Snapshot = v
		case "kept":
			if v != "no" {
				t, err := time.Parse(time.RFC3339, v)
				if err != nil {
					return l, false
				}
				t = t.UTC()
				l.KeptUntil = &t
			}
		case "reset":
			l.ResetVersion, _ = strconv.Atoi(v)
		case "held":
			l.Held = v
		case "taken":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return l, false
			}
			t := time.Unix(n, 0).UTC()
			l.SnapshotAt = &t
		case "kind":
			if v != "unknown" {
				l.Kind = v
			}
		default:
			return l, false
		}
	}
	return l, l.Install != "" && l.Box != "" && l.Snapshot != ""
}

// pveSnapshot is one entry of GET .../snapshot.
type pveSnapshot struct {
	Name        string `json:"name"`
	SnapTime    int64  `json:"snaptime"`
	Description string `json:"description"`
	Parent      string `json:"parent"`
	SnapState   string `json:"snapstate"`
	VMState     int    `json:"vmstate"`
}

func (b *Backend) listSnapshots(ctx context.Context, g providers.Guest) ([]pveSnapshot, error) {
	var list []pveSnapshot
	if err := b.api.get(ctx, guestPath(g)+"/snapshot", &list); err != nil {
		return nil, fmt.Errorf("list %s's snapshots: %w", g.Ref, err)
	}
	return list, nil
}

func find(list []pveSnapshot, name string) *pveSnapshot {
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}

var lockedRE = regexp.MustCompile(`is locked \(([a-z-]+)\)`)

// lockError turns Proxmox's "CT is locked (rollback)" into a LockedError
// with the host's command.
func lockError(g providers.Guest, words string) error {
	if m := lockedRE.FindStringSubmatch(words); m != nil {
		return &providers.LockedError{Lock: providers.Lock{Lock: m[1], Fix: unlockWords(g)}}
	}
	return nil
}

func resetVersion(tags string) int {
	for _, t := range strings.FieldsFunc(tags, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
		if v, ok := strings.CutPrefix(t, ResetTagPrefix); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// Snapshot takes one snapshot: the guest's disk, and on QEMU its memory only
// when asked. It reads the config first (a lock refuses at once, with the
// host's command), keeps the task's UPID before it waits, and answers only
// once Proxmox says the task ended OK and the snapshot has no snapstate. A
// snapshot of which part exists returns ErrIncomplete.
func (b *Backend) Snapshot(ctx context.Context, g providers.Guest, take providers.SnapshotTake, rec providers.Recorder) (providers.SnapshotTaken, error) {
	var out providers.SnapshotTaken
	name, err := SnapshotName(take.Label.Snapshot)
	if err != nil {
		return out, err
	}
	conf, err := b.settled(ctx, g, rec)
	if err != nil {
		return out, err
	}
	if conf.Lock != "" {
		return out, &providers.LockedError{Lock: providers.Lock{Lock: conf.Lock, Fix: unlockWords(g)}}
	}
	if list, err := b.listSnapshots(ctx, g); err == nil {
		if sn := find(list, name); sn != nil {
			// Taken before a restart cut the wait short: answer it as a
			// take would have, or as incomplete.
			if sn.SnapState != "" {
				return out, fmt.Errorf("snapshot %s of %s has snapstate %s: %w", name, g.Ref, sn.SnapState, providers.ErrIncomplete)
			}
			return takenOf(sn, conf, name), nil
		}
	}
	label := take.Label
	label.ResetVersion = resetVersion(str(conf.raw["tags"]))
	params := map[string]any{"snapname": name, "description": Describe(label)}
	if take.Memory {
		if g.Kind != KindQEMU {
			return out, fmt.Errorf("%s's snapshots hold the disk only: %w", g.Kind, providers.ErrUnsupported)
		}
		params["vmstate"] = 1
	}
	upid, err := b.api.post(ctx, guestPath(g)+"/snapshot", params)
	if err != nil {
		return out, fmt.Errorf("take snapshot %s of %s: %w", name, g.Ref, err)
	}
	_, werr := b.api.wait(ctx, upid, rec)
	if werr != nil && (ctx.Err() != nil || errors.Is(werr, providers.ErrTaskPending)) {
		return out, werr // the core waits for the task; a resumed take finds the snapshot
	}
	list, lerr := b.listSnapshots(ctx, g)
	if werr != nil {
		var te *TaskError
		if errors.As(werr, &te) {
			if le := lockError(g, te.ExitStatus); le != nil {
				return out, le
			}
			if lerr == nil {
				if sn := find(list, name); sn != nil {
					return out, fmt.Errorf("%s: %w (snapstate %s)", te.Error(), providers.ErrIncomplete, sn.SnapState)
				}
			}
		}
		return out, fmt.Errorf("take snapshot %s of %s: %w", name, g.Ref, werr)
	}
	if lerr != nil {
		return out, fmt.Errorf("confirm snapshot %s of %s: %w", name, g.Ref, lerr)
	}
	sn := find(list, name)
	switch {
	case sn == nil:
		return out, fmt.Errorf("Proxmox's task ended OK but %s has no snapshot %s", g.Ref, name)
	case sn.SnapState != "":
		return out, fmt.Errorf("snapshot %s of %s has snapstate %s: %w", name, g.Ref, sn.SnapState, providers.ErrIncomplete)
	}
	return takenOf(sn, conf, name), nil
}

func takenOf(sn *pveSnapshot, conf guestConfig, name string) providers.SnapshotTaken {
	holds := providers.HoldsDisk
	if sn.VMState == 1 {
		holds = providers.HoldsDiskAndMemory
	}
	return providers.SnapshotTaken{Ref: name, Storage: conf.Storage, CapturedAt: time.Unix(sn.SnapTime, 0).UTC(), Holds: holds,
		ResetVersion: resetVersion(str(conf.raw["tags"])), Parent: sn.Parent}
}

// delTask finds the UPID of the task a DELETE just started on a guest: the
// client keeps the DELETE's answer to itself.
func (b *Backend) delTask(ctx context.Context, g providers.Guest, typ string) (string, error) {
	var tasks []struct {
		UPID string `json:"upid"`
	}
	path := fmt.Sprintf("/nodes/%s/tasks?vmid=%s&typefilter=%s&source=all&limit=1", g.Host, g.Ref, typ)
	if err := b.api.get(ctx, path, &tasks); err != nil {
		return "", err
	}
	if len(tasks) == 0 {
		return "", fmt.Errorf("no %s task on %s for %s", typ, g.Host, g.Ref)
	}
	return tasks[0].UPID, nil
}

// DeleteSnapshot deletes one snapshot; an incomplete one (snapstate) is
// deleted with force, which finishes Proxmox's own clean-up. A snapshot
// already gone is a success. A locked guest refuses with the host's command.
func (b *Backend) DeleteSnapshot(ctx context.Context, ref providers.SnapshotRef, rec providers.Recorder) error {
	g := ref.Guest
	if ref.Where == "held-copy" {
		// A held copy is a guest of its own: deleting it deletes the copy.
		return b.dropCopy(ctx, g, rec)
	}
	list, err := b.listSnapshots(ctx, g)
	if errors.Is(err, providers.ErrNotFound) {
		return nil // the guest is gone, and its snapshots with it
	}
	if err != nil {
		return err
	}
	sn := find(list, ref.Ref)
	if sn == nil {
		return nil
	}
	path := guestPath(g) + "/snapshot/" + ref.Ref
	if sn.SnapState != "" {
		path += "?force=1"
	}
	if err := b.api.del(ctx, path); err != nil {
		return fmt.Errorf("delete snapshot %s of %s: %w", ref.Ref, g.Ref, err)
	}
	typ := "qmdelsnapshot"
	if g.Kind == KindLXC {
		typ = "vzdelsnapshot"
	}
	upid, err := b.delTask(ctx, g, typ)
	if err != nil {
		return fmt.Errorf("delete snapshot %s of %s: %w", ref.Ref, g.Ref, err)
	}
	if _, err := b.api.wait(ctx, upid, rec); err != nil {
		var te *TaskError
		if errors.As(err, &te) {
			if le := lockError(g, te.ExitStatus); le != nil {
				return le
			}
			if strings.Contains(te.ExitStatus, "does not exist") {
				return nil
			}
		}
		return fmt.Errorf("delete snapshot %s of %s: %w", ref.Ref, g.Ref, err)
	}
	return nil
}

// SetKeptUntil rewrites the snapshot's description with its keep date.
func (b *Backend) SetKeptUntil(ctx context.Context, ref providers.SnapshotRef, keptUntil *time.Time) error {
	if ref.Where == "held-copy" {
		return b.setCopyKeptUntil(ctx, ref.Guest, keptUntil)
	}
	list, err := b.listSnapshots(ctx, ref.Guest)
	if err != nil {
		return err
	}
	sn := find(list, ref.Ref)
	if sn == nil {
		return fmt.Errorf("snapshot %s of %s: %w", ref.Ref, ref.Guest.Ref, providers.ErrNotFound)
	}
	l, ok := ParseLabel(sn.Description)
	if !ok {
		return fmt.Errorf("snapshot %s of %s has no boxsnap label", ref.Ref, ref.Guest.Ref)
	}
	l.KeptUntil = keptUntil
	if _, err := b.api.put(ctx, guestPath(ref.Guest)+"/snapshot/"+ref.Ref+"/config", map[string]any{"description": Describe(l)}); err != nil {
		if le := lockError(ref.Guest, err.Error()); le != nil {
			return le
		}
		return fmt.Errorf("label snapshot %s of %s: %w", ref.Ref, ref.Guest.Ref, err)
	}
	return nil
}

// resource is one guest of GET /cluster/resources?type=vm.
type resource struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	VMID     int    `json:"vmid"`
	Node     string `json:"node"`
	Status   string `json:"status"`
	Name     string `json:"name"`
	Template int    `json:"template"`
	Lock     string `json:"lock"`
	Tags     string `json:"tags"`
}

func (b *Backend) resources(ctx context.Context) ([]resource, error) {
	var list []resource
	if err := b.api.get(ctx, "/cluster/resources?type=vm", &list); err != nil {
		return nil, fmt.Errorf("list guests: %w", err)
	}
	return list, nil
}

// heldWorkers bounds the listings run at once.
const heldWorkers = 8

// HeldSnapshots lists every snapshot this install labelled: one listing of
// the cluster's guests, then at most one snapshot listing per guest. A node
// that does not answer is named in a *providers.HostsUnreachableError beside
// what the other nodes listed.
func (b *Backend) HeldSnapshots(ctx context.Context) ([]providers.HeldSnapshot, error) {
	guests, err := b.resources(ctx)
	if err != nil {
		return nil, err
	}
	type result struct {
		held []providers.HeldSnapshot
		host string
		err  error
	}
	jobs := make(chan resource)
	results := make(chan result)
	var wg sync.WaitGroup
	for range heldWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range jobs {
				h, err := b.heldOf(ctx, r)
				results <- result{held: h, host: r.Node, err: err}
			}
		}()
	}
	var cut []string
	go func() {
		for _, r := range guests {
			if r.Template == 1 || hasTag(r.Tags, HeldTag) {
				continue // held copies are listed below, from their labels
			}
			if r.Status == "unknown" {
				continue // its node does not answer; counted below
			}
			jobs <- r
		}
		close(jobs)
		wg.Wait()
		close(results)
	}()
	seen := map[string]bool{}
	for _, r := range guests {
		if r.Status == "unknown" && !seen[r.Node] {
			seen[r.Node] = true
			cut = append(cut, r.Node)
		}
	}
	var out []providers.HeldSnapshot
	var firstErr error
	for r := range results {
		switch {
		case r.err == nil:
			out = append(out, r.held...)
		case errors.Is(r.err, providers.ErrUnreachable):
			if !seen[r.host] {
				seen[r.host] = true
				cut = append(cut, r.host)
			}
		case errors.Is(r.err, providers.ErrNotFound):
			// The guest went between the two listings.
		default:
			if firstErr == nil {
				firstErr = r.err
			}
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	copies, err := b.findCopies(ctx, guests, false)
	if err != nil && !errors.Is(err, providers.ErrUnreachable) {
		return nil, err
	}
	out = append(out, heldCopiesListed(copies)...)
	sort.Slice(out, func(i, j int) bool { return out[i].TakenAt.Before(out[j].TakenAt) })
	if len(cut) > 0 {
		sort.Strings(cut)
		return out, &providers.HostsUnreachableError{Hosts: cut}
	}
	return out, nil
}

func (b *Backend) heldOf(ctx context.Context, r resource) ([]providers.HeldSnapshot, error) {
	kind := KindQEMU
	if r.Type == "lxc" {
		kind = KindLXC
	}
	g := providers.Guest{Backend: b.cfg.ID, Kind: kind, Host: r.Node, Ref: strconv.Itoa(r.VMID)}
	list, err := b.listSnapshots(ctx, g)
	if err != nil {
		return nil, err
	}
	where := "current"
	if hasTag(r.Tags, EarlierTag) {
		where = "earlier" // a box's earlier guest, after a swap
	}
	var out []providers.HeldSnapshot
	for _, sn := range list {
		if sn.Name == "current" {
			continue
		}
		l, ok := ParseLabel(sn.Description)
		if !ok || l.Install != b.cfg.Install {
			continue
		}
		holds := providers.HoldsDisk
		if sn.VMState == 1 {
			holds = providers.HoldsDiskAndMemory
		}
		h := providers.HeldSnapshot{Ref: providers.SnapshotRef{ID: l.Snapshot, Ref: sn.Name, Guest: g, Where: where},
			Label: l, Host: r.Node, TakenAt: time.Unix(sn.SnapTime, 0).UTC(), Holds: holds, Parent: sn.Parent}
		if sn.SnapState != "" {
			h.Incomplete = true
			h.Error = fmt.Sprintf("Proxmox left it with snapstate %s", sn.SnapState)
		}
		out = append(out, h)
	}
	return out, nil
}
