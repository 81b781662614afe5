package answers

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// Words of the answers, for agents and the person alike.

// holdsWords is what a snapshot holds in an answer's sentence: "It holds
// the disk and memory".
func holdsWords(holds string) string {
	return "the " + snapshots.HoldsWords(holds, "")
}

// CountWords is "3 of 5 for this box".
func CountWords(count, limit int) string {
	return fmt.Sprintf("%d of %d for this box", count, limit)
}

// TakeWords is box_snapshot's answer: its name and ID, what it holds and
// leaves out, its size where known, how long it took, its price if any, and
// "3 of 5 for this box".
func TakeWords(box string, res take.TakeResult, price *providers.Price) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Took ‘%s’ (%s) of %s in %s. It holds %s", res.Name, res.Snapshot, box, snapshots.DurationWords(time.Duration(res.TookMs)*time.Millisecond), holdsWords(res.Holds))
	if res.Excludes != "" {
		fmt.Fprintf(&b, "; it leaves out %s", res.Excludes)
	}
	meaning := "own"
	fmt.Fprintf(&b, ". Its size: %s.", snapshots.SizeOfWords(res.Size, &meaning))
	if w := snapshots.PriceWords(price); w != "" {
		fmt.Fprintf(&b, " Its price: %s.", w)
	}
	if res.Replaced != "" {
		fmt.Fprintf(&b, " It replaced ‘%s’, the oldest this thread took, as the box holds %d.", res.Replaced, res.Limit)
	}
	fmt.Fprintf(&b, " %s.", upper(CountWords(res.Count, res.Limit)))
	return b.String()
}

// RestoreWords is box_restore's answer: what it replaced, the undo's name,
// whether processes ended, size changes, and the box's state.
func (s Lookups) RestoreWords(ctx context.Context, c snapshots.Caller, box string, res restore.RestoreResult) string {
	var b strings.Builder
	taken := ""
	if sn, _, err := s.Core.Snapshot(ctx, c, res.Target); err == nil {
		taken = ", taken " + sn.TakenAt.In(s.Core.TimeZone(ctx)).Format("Mon 2 Jan 15:04")
	}
	fmt.Fprintf(&b, "Restored %s to ‘%s’%s: everything on its disk since then was replaced.", box, res.TargetName, taken)
	if res.UndoName != "" {
		fmt.Fprintf(&b, " Undo restores ‘%s’ (%s).", res.UndoName, res.Undo)
	} else {
		b.WriteString(" No undo was taken.")
	}
	if res.Processes {
		b.WriteString(" Every process in it ended.")
	}
	if sz := res.Size; sz != nil && (sz.Cores > 0 || sz.MemoryBytes > 0 || sz.DiskBytes > 0) {
		var parts []string
		if sz.Cores > 0 {
			parts = append(parts, fmt.Sprintf("%d cores", sz.Cores))
		}
		if sz.MemoryBytes > 0 {
			parts = append(parts, snapshots.GiB(sz.MemoryBytes)+" memory")
		}
		if sz.DiskBytes > 0 {
			parts = append(parts, snapshots.GiB(sz.DiskBytes)+" disk")
		}
		fmt.Fprintf(&b, " %s went back to %s, as it was then.", box, strings.Join(parts, ", "))
	}
	if len(res.Replaced) > 0 {
		fmt.Fprintf(&b, " Older undos went: ‘%s’.", strings.Join(res.Replaced, "’, ‘"))
	}
	fmt.Fprintf(&b, " %s is %s.", box, res.BoxState)
	return b.String()
}

// DeleteWords is box_snapshot_delete's answer: what it freed, where known.
func DeleteWords(box string, res snapshots.DeleteResult) string {
	name := res.Name
	if name == "" {
		return fmt.Sprintf("%s was already gone.", res.Snapshot)
	}
	if res.Freed == nil {
		return fmt.Sprintf("Deleted ‘%s’ of %s; what it freed is not known.", name, box)
	}
	return fmt.Sprintf("Deleted ‘%s’ of %s: it freed %s.", name, box, snapshots.GB(*res.Freed))
}

// KeepWords is a keep's or an unkeep's answer: until when the snapshot is
// kept, or that it goes with its box again.
func (s Lookups) KeepWords(ctx context.Context, c snapshots.Caller, box string, unkeep bool, res snapshots.KeepResult) string {
	name := res.Snapshot
	if sn, _, err := s.Core.Snapshot(ctx, c, res.Snapshot); err == nil {
		name = "‘" + sn.Name + "’"
	}
	if unkeep || res.KeptUntil == nil {
		return fmt.Sprintf("%s is no longer kept: it goes with %s again.", name, box)
	}
	return fmt.Sprintf("Kept %s until %s.", name, res.KeptUntil.UTC().Format("2 Jan 2006"))
}

// PriceOf is a snapshot's price, if it has one.
func (s Lookups) PriceOf(ctx context.Context, c snapshots.Caller, id string) *providers.Price {
	sn, b, err := s.Core.Snapshot(ctx, c, id)
	if err != nil {
		return nil
	}
	return s.SnapshotPrice(sn, b)
}

// SnapshotPrice is the price on the snapshot's record or, as the core
// records none yet, the price its box's backend offers for the box's kind
// (Snapshotting.Price); nil where neither has one, which answers say by
// saying nothing, never "free".
func (s Lookups) SnapshotPrice(sn *snapshots.Snapshot, b *snapshots.Box) *providers.Price {
	if p := snapshots.PriceOf(sn.Price); p != nil {
		return p
	}
	if b == nil {
		return nil
	}
	if off := s.Core.Snapshotting(b); off != nil && off.Price != nil {
		p := *off.Price
		return &p
	}
	return nil
}

func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// compareWords is a comparison's answer: "14 files changed, 2 added, 1
// removed since then", and which page this is.
func compareWords(cmp *snapshots.Comparison) string {
	w := cmp.Words + "."
	if cmp.Total > len(cmp.Changes) && len(cmp.Changes) > 0 {
		w += fmt.Sprintf(" Listing %d to %d of %d.", cmp.Offset+1, cmp.Offset+len(cmp.Changes), cmp.Total)
	}
	return w
}

// fileDiffWords is a file's comparison's answer.
func fileDiffWords(path, name, against, diff string) string {
	with := "the box now"
	if against != "" {
		with = "‘" + against + "’"
	}
	if diff == "" {
		return fmt.Sprintf("%s is the same in ‘%s’ and %s.", path, name, with)
	}
	return fmt.Sprintf("%s differs between ‘%s’ and %s: the diff is unified, ‘%s’ first.", path, name, with, name)
}

// BoxHoldsWords says what a box's snapshots hold, or that it has none.
func (s Lookups) BoxHoldsWords(b *snapshots.Box, n int) string {
	what := "Its snapshots hold the disk"
	if sn := s.Core.Snapshotting(b); sn == nil {
		what = "It takes no snapshots"
	} else {
		if sn.OffersMemory() {
			what += ", or the disk and memory when asked"
		}
		if sn.Excludes != "" {
			what += "; they leave out " + sn.Excludes
		}
	}
	switch n {
	case 0:
		return fmt.Sprintf("%s has no snapshots you can see. %s.", b.Name, what)
	case 1:
		return fmt.Sprintf("%s has 1 snapshot you can see. %s.", b.Name, what)
	}
	return fmt.Sprintf("%s has %d snapshots you can see. %s.", b.Name, n, what)
}

// ByWords says who took a snapshot: "by you", "by the agent in (thread)",
// "by a boxsnap command", "by boxsnap: (why)". The caller sees only
// snapshots of its own thread's agents, so naming the thread tells nothing
// new.
func (s Lookups) ByWords(ctx context.Context, sn *snapshots.Snapshot) string {
	title, why := "", ""
	if sn.ByThreadID != nil {
		if t, err := s.Boxes.Thread(ctx, snapshots.Owner(), *sn.ByThreadID); err == nil {
			title = t.Title
		}
	}
	if sn.ByWhy != nil {
		why = *sn.ByWhy
	}
	return snapshots.ByWords(sn.ByKind, title, why)
}

// ForkWords says what a fork made: “Made amber-fox-fork, forked from
// amber-fox at 10:42.”
func ForkWords(res fork.ForkResult) string {
	return fmt.Sprintf("Made %s, %s.", res.Name, res.From)
}

// ForkManyWords says what a fork into several boxes made: “Made fix-1,
// fix-2 and fix-3, forked from amber-fox at 10:42.”, then each fork that
// did not end done, with its words.
func ForkManyWords(asked int, made []string, from string, others []string) string {
	var b strings.Builder
	switch len(made) {
	case 0:
		fmt.Fprintf(&b, "None of the %d forks is made yet.", asked)
	case 1:
		fmt.Fprintf(&b, "Made %s, %s.", made[0], from)
	default:
		fmt.Fprintf(&b, "Made %s and %s, %s.", strings.Join(made[:len(made)-1], ", "), made[len(made)-1], from)
	}
	if len(made) > 0 && len(made) < asked {
		fmt.Fprintf(&b, " %d of %d forks are made.", len(made), asked)
	}
	for _, o := range others {
		b.WriteString(" " + o)
	}
	return b.String()
}
