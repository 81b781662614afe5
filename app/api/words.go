package api

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
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

// countWords is "3 of 5 for this box".
func countWords(count, limit int) string {
	return fmt.Sprintf("%d of %d for this box", count, limit)
}

// takeWords is box_snapshot's answer: its name and ID, what it holds and
// leaves out, its size where known, how long it took, its price if any, and
// "3 of 5 for this box".
func takeWords(box string, res take.TakeResult, price *providers.Price) string {
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
	fmt.Fprintf(&b, " %s.", upper(countWords(res.Count, res.Limit)))
	return b.String()
}

// restoreWords is box_restore's answer: what it replaced, the undo's name,
// whether processes ended, size changes, and the box's state.
func (s lookups) restoreWords(ctx context.Context, c snapshots.Caller, box string, res restore.RestoreResult) string {
	var b strings.Builder
	taken := ""
	if sn, _, err := s.core.Snapshot(ctx, c, res.Target); err == nil {
		taken = ", taken " + sn.TakenAt.In(s.core.TimeZone(ctx)).Format("Mon 2 Jan 15:04")
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

// deleteWords is box_snapshot_delete's answer: what it freed, where known.
func deleteWords(box string, res snapshots.DeleteResult) string {
	name := res.Name
	if name == "" {
		return fmt.Sprintf("%s was already gone.", res.Snapshot)
	}
	if res.Freed == nil {
		return fmt.Sprintf("Deleted ‘%s’ of %s; what it freed is not known.", name, box)
	}
	return fmt.Sprintf("Deleted ‘%s’ of %s: it freed %s.", name, box, snapshots.GB(*res.Freed))
}

func (s lookups) keepWords(ctx context.Context, c snapshots.Caller, box string, unkeep bool, res snapshots.KeepResult) string {
	name := res.Snapshot
	if sn, _, err := s.core.Snapshot(ctx, c, res.Snapshot); err == nil {
		name = "‘" + sn.Name + "’"
	}
	if unkeep || res.KeptUntil == nil {
		return fmt.Sprintf("%s is no longer kept: it goes with %s again.", name, box)
	}
	return fmt.Sprintf("Kept %s until %s.", name, res.KeptUntil.UTC().Format("2 Jan 2006"))
}

// priceOf is a snapshot's price, if it has one.
func (s lookups) priceOf(ctx context.Context, c snapshots.Caller, id string) *providers.Price {
	sn, b, err := s.core.Snapshot(ctx, c, id)
	if err != nil {
		return nil
	}
	return s.snapshotPrice(sn, b)
}

// snapshotPrice is the price on the snapshot's record or, as the core
// records none yet, the price its box's backend offers for the box's kind
// (Snapshotting.Price); nil where neither has one, which answers say by
// saying nothing, never "free".
func (s lookups) snapshotPrice(sn *snapshots.Snapshot, b *snapshots.Box) *providers.Price {
	if p := snapshots.PriceOf(sn.Price); p != nil {
		return p
	}
	if b == nil {
		return nil
	}
	if off := s.core.Snapshotting(b); off != nil && off.Price != nil {
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

// requestReusedWords refuse a tool call whose retry key (its request) an
// earlier call of another tool, or of the same tool with other arguments,
// already made.
func requestReusedWords(request, tool string, sameTool bool) string {
	if sameTool {
		tool += " with other arguments"
	}
	return fmt.Sprintf("The request ID %s was used for another call (%s): make a new request ID for this one.", request, tool)
}

// pollWords says how to poll a long operation, or a request for the
// person's word, by its ID.
func pollWords(id string) string {
	return fmt.Sprintf("Poll it with box_operation (operation %s, and wait: seconds to wait for its end, at most %d), or GET /api/v1/operations/%s?wait=true.", id, MaxPollWait, id)
}

// pollWaitWords refuses a wait out of bounds.
func pollWaitWords(most int) string {
	return fmt.Sprintf("wait is a number of seconds from 0 to %d.", most)
}
