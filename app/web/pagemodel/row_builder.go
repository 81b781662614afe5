package pagemodel

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
	"github.com/boxsnap/boxsnap/app/snapshots/keep"
	"github.com/boxsnap/boxsnap/app/snapshots/plans"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/app/snapshots/tab"
	"github.com/boxsnap/boxsnap/providers"
)

// RowBuilder builds what the pages show of snapshots and boxes: each
// snapshot's row (its badges, its one line, each action with its URL and
// why it is refused), a box's card of rows, its head, facts, notices and
// timeline, the Snapshots tab's filters and line, the Settings rows' plans,
// the requests, the Machines, Trash and Import pages' rows. It holds only
// what building them reads: the core's parts and the plans kept a few
// seconds.
type RowBuilder struct {
	core     *snapshots.Service
	boxes    *boxes.Boxes
	contents *contents.Contents
	plans    *PlanCache
	heads    *heads.Heads
	// keeps says why a Keep is off while the rate is past the ceiling.
	keeps *keep.Keeps
	// tab and approvals are read for the line under the tabs.
	tab       *tab.Tab
	approvals *approvals.Approvals
	logger    *slog.Logger
}

// RowContext is what building rows needs once per request.
type RowContext struct {
	ctx     context.Context
	Now     time.Time
	tz      *time.Location
	Threads *threadTitles
	back    string // where dialogs return
	// KeepDays is the setting's days, for "Keep 30 more days".
	KeepDays int
	// Selecting shows a checkbox on each row (the tab's Select).
	Selecting bool
	// names are the names of the box's snapshots by ID, for "from ‘…’".
	names map[string]string
}

func (rb *RowBuilder) RowContext(ctx context.Context, back string, selecting bool) RowContext {
	rc := RowContext{ctx: ctx, Now: time.Now(), tz: rb.core.TimeZone(ctx), back: back,
		Selecting: selecting, KeepDays: snapshots.DefaultKeepDays,
		Threads: &threadTitles{known: map[string]string{}, read: func(ids []string) (map[string]string, error) {
			return rb.boxes.ThreadTitles(ctx, snapshots.Owner(), ids)
		}}}
	if st, err := rb.core.Settings(ctx); err == nil {
		rc.KeepDays = st.KeepDays
	}
	return rc
}

// WhereWords says where a box lives: "on this host", "Proxmox LXC on pve-1".
func (rb *RowBuilder) WhereWords(b *snapshots.Box) string {
	be, ok := rb.core.BackendOf(b)
	return plans.WhereWords(be, ok, b)
}

// OnHost says where a box's space is taken, "on pve-1", as the Take
// dialog's words have it: "Up to 16 GiB more on pve-1".
func (rb *RowBuilder) OnHost(b *snapshots.Box) string {
	if be, ok := rb.core.BackendOf(b); ok && be.Kind != "local" && b.Host != "" {
		return "on " + b.Host
	}
	return rb.WhereWords(b)
}

func (rb *RowBuilder) Head(b *snapshots.Box, rc RowContext) BoxHead {
	h := BoxHead{Name: b.Name, Href: "/boxes/" + url.PathEscape(b.Name), Badges: kindBadges(b), Where: rb.WhereWords(b)}
	if b.ThreadID != nil {
		h.Thread = rc.Threads.title(*b.ThreadID)
		if h.Thread == "" {
			h.Thread = *b.ThreadID
		}
	} else {
		h.YourMachine = true
	}
	if b.ReleasedAt != nil {
		h.Released = "released " + b.ReleasedAt.In(rc.tz).Format("2 Jan")
	}
	return h
}

// row builds one snapshot's row: badges, the one line in the
// specification's order, and each action with why it is refused.
func (rb *RowBuilder) row(b *snapshots.Box, sn *snapshots.Snapshot, pins []snapshots.Pin, rc RowContext) SnapRow {
	owner := snapshots.Owner()
	base := fmt.Sprintf("/boxes/%s/snapshots/%s", url.PathEscape(b.Name), sn.ID)
	q := "?back=" + url.QueryEscape(rc.back)
	r := SnapRow{ID: sn.ID, BoxName: b.Name, Name: sn.Name, Memory: sn.Holds == string(providers.HoldsDiskAndMemory),
		Kept: sn.Kept(), Undo: sn.IsUndo(), IsKept: sn.Kept(), Back: rc.back, Selecting: rc.Selecting, Automatic: sn.Automatic}
	if sn.Note != nil {
		r.Note = *sn.Note
	}
	r.Screen = b.HasScreen
	if b.HasScreen && sn.Picture == "taken" {
		r.Picture = true
		at := sn.TakenAt
		if sn.CapturedAt != nil {
			at = *sn.CapturedAt
		}
		r.PicAlt = fmt.Sprintf("%s's screen at %s", b.Name, at.In(rc.tz).Format("15:04"))
		r.PicSrc = "/pictures/" + sn.ID
	}
	r.Attention = rowMarks(&r, b, sn, pins, rc)
	r.Line = rb.line(b, sn, rc)
	elig := func(act snapshots.Action, ch snapshots.Change) string {
		if err := snapshots.MayAct(owner, act, b, sn); err != nil {
			return RefusalWords(err)
		}
		return RefusalWords(snapshots.Eligible(sn, ch, pins, rc.Now, rc.tz))
	}
	rb.actions(&r, b, sn, rc, base, q, elig)
	r.Menu = rb.menu(&r, b, sn, rc, base, q, elig)
	return r
}

// rowMarks gives a row its red failure and its busy spinner, and says in
// amber what needs the owner first: unavailable, goes soon, an earlier
// guest's, a held copy.
func rowMarks(r *SnapRow, b *snapshots.Box, sn *snapshots.Snapshot, pins []snapshots.Pin, rc RowContext) string {
	var attention []string
	switch sn.State {
	case snapshots.StateFailed:
		r.Failure = "take failed"
		if sn.Error != nil {
			r.Failure += ": " + *sn.Error
		}
	case snapshots.StateIncomplete:
		r.Failure = "incomplete"
	case snapshots.StateUnavailable:
		attention = append(attention, "unavailable")
	case snapshots.StateLost:
		r.Failure = "lost: its backend no longer has it"
	case snapshots.StateTaking:
		r.Busy = "Taking…"
	case snapshots.StateDeleting:
		r.Busy = "Deleting…"
	}
	for _, p := range pins {
		switch {
		case r.Busy != "":
		case p.Kind == snapshots.OpRestore && !sn.IsUndo():
			r.Busy = "Restoring to this…"
		case p.Kind == snapshots.OpKeep:
			r.Busy = "Keeping…"
		case p.Kind == snapshots.OpUnkeep:
			r.Busy = "Stopping keeping…"
		case p.Kind == snapshots.OpDelete || p.Kind == snapshots.OpExpiry:
			r.Busy = "Deleting…"
		}
	}
	if sn.Kept() {
		left := sn.KeptUntil.Sub(rc.Now)
		if left < snapshots.GoesSoonDays*24*time.Hour {
			r.GoesSoon = true
			days := int(left.Hours()/24) + 1
			if days <= 1 {
				attention = append(attention, "goes tomorrow")
			} else {
				attention = append(attention, fmt.Sprintf("goes in %d days", days))
			}
		}
	}
	switch sn.Guest {
	case "earlier":
		attention = append(attention, fmt.Sprintf("on %s's earlier guest: fork only", b.Name))
	case "held-copy":
		where := "held copy"
		if sn.Host != "" {
			where += " on " + sn.Host // where it lives after its box's release
		}
		attention = append(attention, where)
	}
	return strings.Join(attention, " · ")
}

// line is a row's one line, in the specification's order: when, by whom,
// what it holds, its size and price, how long it stays, what it was taken
// from.
func (rb *RowBuilder) line(b *snapshots.Box, sn *snapshots.Snapshot, rc RowContext) string {
	thread := ""
	if sn.ByThreadID != nil {
		thread = rc.Threads.title(*sn.ByThreadID)
	}
	why := ""
	if sn.ByWhy != nil {
		why = *sn.ByWhy
	}
	parts := []string{WhenWords(sn.TakenAt, rc.Now, rc.tz), snapshots.ByWords(sn.ByKind, thread, why), snapshots.HoldsWords(sn.Holds, sn.Scope)}
	parts = append(parts, SizeWords(sn))
	if p := PriceTag(snapshots.PriceOf(sn.Price)); p != "" {
		parts = append(parts, p)
	}
	switch {
	case sn.Kept():
		parts = append(parts, "kept until "+sn.KeptUntil.In(rc.tz).Format("2 Jan"))
	case sn.IsUndo():
		parts = append(parts, "an undo")
	case sn.Automatic:
		parts = append(parts, "thinned as it ages")
	default:
		parts = append(parts, "goes with the box")
	}
	if sn.ParentID != nil {
		// What it was taken from: the box's head then.
		if name, ok := rc.names[*sn.ParentID]; ok {
			parts = append(parts, "from ‘"+name+"’")
		} else {
			parts = append(parts, "from "+rb.heads.ParentName(rc.ctx, sn))
		}
	}
	return strings.Join(parts, " · ")
}

// actions gives a row each action with its URL and why it is refused now,
// and the words a disabled Restore or Fork says on the row itself.
func (rb *RowBuilder) actions(r *SnapRow, b *snapshots.Box, sn *snapshots.Snapshot, rc RowContext, base, q string,
	elig func(snapshots.Action, snapshots.Change) string) {
	snapping := rb.core.Snapshotting(b)
	r.Restore = Action{Label: fmt.Sprintf("Restore %s to %s", b.Name, sn.Name), Href: base + "/restore" + q}
	switch {
	case b.State == snapshots.BoxTrashed:
		r.Restore.Why = InTrashWords(b.Name)
	case b.ReleasedAt != nil || b.State != snapshots.BoxReady:
		r.Restore.Why = fmt.Sprintf("%s is released: fork it instead.", b.Name)
	case snapping == nil || snapping.Restore == providers.RestoreNone:
		r.Restore.Why = fmt.Sprintf("Boxes on %s cannot be restored.", rb.WhereWords(b))
	case rb.RestoresOff(rc.ctx, b):
		r.Restore.Why = restore.ExecutionRestoresOffWords
	default:
		r.Restore.Why = elig(snapshots.ActRestore, snapshots.ChangeRestore)
		// Beyond the folders here, the snapshot's own plan says whether it
		// can be restored (ZFS restores only the newest, until checked):
		// the row's Restore is off with why, not a dialog that refuses.
		if be, ok := rb.core.BackendOf(b); r.Restore.Why == "" && ok && be.Kind != "local" {
			if plan, err := rb.plans.snapshotPlan(rc.ctx, rb.core, b, sn.ID); err == nil && plan.Restore.Way == providers.WayNone && plan.Restore.Why != "" {
				r.Restore.Why = plan.Restore.Why
			}
		}
	}
	r.Fork = Action{Label: fmt.Sprintf("Fork %s from %s", b.Name, sn.Name), Href: base + "/fork" + q, Why: rb.forkWhy(b, sn, rc)}
	r.Rename = Action{Label: fmt.Sprintf("Rename %s", sn.Name), Href: base + "/rename" + q, Why: elig(snapshots.ActRename, snapshots.ChangeRename)}
	r.NoteA = Action{Label: fmt.Sprintf("Note on %s", sn.Name), Href: base + "/note" + q, Why: elig(snapshots.ActNote, snapshots.ChangeNote)}
	r.Keep = Action{Label: fmt.Sprintf("Keep %s", sn.Name), Href: base + "/keep" + q, Why: elig(snapshots.ActKeep, snapshots.ChangeKeep)}
	if r.Keep.Why == "" && (snapping == nil || snapping.KeepsPastRelease == providers.KeepsNo || snapping.Fork == providers.ForkNone) {
		r.Keep.Why = snapshots.CannotBeKeptWords(b.Name)
	}
	if r.Keep.Why == "" {
		r.Keep.Why = rb.ceilingWhy(rc.ctx, b, sn)
	}
	if sn.Kept() {
		r.Keep.Label = fmt.Sprintf("Keep %s longer", sn.Name)
	}
	if sn.Kept() {
		r.RenewText = RenewWords(rc.KeepDays)
		r.Renew = Action{Label: fmt.Sprintf("%s for %s", RenewWords(rc.KeepDays), sn.Name), Href: base + "/renew", Why: r.Keep.Why}
	}
	r.Unkeep = Action{Label: fmt.Sprintf("Stop keeping %s", sn.Name), Href: base + "/unkeep" + q, Why: elig(snapshots.ActUnkeep, snapshots.ChangeUnkeep)}
	r.Delete = Action{Label: fmt.Sprintf("Delete %s", sn.Name), Href: base + "/delete" + q, Why: elig(snapshots.ActDelete, snapshots.ChangeDelete)}
	// On the box page a disabled action says why on the row itself, not
	// only on hover (the tab, dense, keeps it in the control's name).
	var off []string
	if r.Restore.Why != "" && r.Busy == "" {
		off = append(off, "Restore is off: "+r.Restore.Why)
	}
	if r.Fork.Why != "" && r.Busy == "" && r.Fork.Why != r.Restore.Why {
		off = append(off, "Fork is off: "+r.Fork.Why)
	}
	r.Off = strings.Join(off, " ")
}

// menu is a row's menu: the safe actions first, then those that put the
// snapshot at risk.
func (rb *RowBuilder) menu(r *SnapRow, b *snapshots.Box, sn *snapshots.Snapshot, rc RowContext, base, q string,
	elig func(snapshots.Action, snapshots.Change) string) []MenuItem {
	item := func(text string, a Action) MenuItem {
		return MenuItem{Text: text, Label: a.Label + "…", Href: a.Href, Why: a.Why}
	}
	keepText := "Keep…"
	if sn.Kept() {
		keepText = "Keep longer…"
	}
	fork := item("Fork…", r.Fork)
	fork.Narrow = true
	// The safe actions first; then those that put the snapshot at risk:
	// Unsave…, Stop keeping, Delete….
	var risky []MenuItem
	menu := []MenuItem{fork}
	for _, m := range saveItems(b, sn, base, q, elig) {
		if strings.HasPrefix(m.Text, "Unsave") {
			risky = append(risky, m)
		} else {
			menu = append(menu, m)
		}
	}
	menu = append(menu, headItems(b, sn, base)...)
	menu = append(menu, item("Rename…", r.Rename), item("Note…", r.NoteA), item(keepText, r.Keep))
	if sn.Kept() {
		renew := item(RenewWords(rc.KeepDays), r.Renew)
		renew.Post, renew.Label = true, r.Renew.Label
		menu = append(menu, renew)
		m := item("Stop keeping", r.Unkeep)
		m.Post, m.Href, m.Label = true, base+"/unkeep", r.Unkeep.Label
		risky = append(risky, m)
	}
	menu = append(menu, rb.lookItems(b, sn, base)...)
	menu = append(menu, rb.moveItems(b, sn, base, q)...)
	menu = append(menu, MenuItem{Text: "Copy ID", Copy: sn.ID})
	menu = append(menu, risky...)
	menu = append(menu, item("Delete…", r.Delete))
	return menu
}

// Group builds a box's card from the core's list.
func (rb *RowBuilder) Group(bs snapshots.BoxSnapshots, sns []*snapshots.Snapshot, rc RowContext, live string) BoxGroup {
	return rb.GroupWith(bs, sns, rc, live, rb.RestoresOf(rc, bs.Box))
}

// GroupWith is group with the box's restores as its page read them.
func (rb *RowBuilder) GroupWith(bs snapshots.BoxSnapshots, sns []*snapshots.Snapshot, rc RowContext, live string, rs restores) BoxGroup {
	g := BoxGroup{ID: "box-" + bs.Box.Name, Name: bs.Box.Name, Head: rb.Head(bs.Box, rc), LiveURL: live, Total: len(bs.Snapshots)}
	rc.names = make(map[string]string, len(bs.Snapshots))
	for _, sn := range bs.Snapshots {
		rc.names[sn.ID] = sn.Name
	}
	for _, sn := range sns {
		row := rb.row(bs.Box, sn, bs.Pins[sn.ID], rc)
		if len(bs.Pins[sn.ID]) > 0 {
			g.Busy = true // an operation uses it: the card polls until it ends
		}
		if row.Busy != "" {
			g.Busy = true
			g.Announce = fmt.Sprintf("%s: ‘%s’ %s", bs.Box.Name, sn.Name, strings.ToLower(strings.TrimSuffix(row.Busy, "…")))
		}
		g.Rows = append(g.Rows, row)
	}
	refs := make([]snapshotRowRef, len(sns))
	for i, sn := range sns {
		refs[i] = snapshotRowRef{row: &g.Rows[i], sn: sn}
	}
	g.restores = rs
	g.restores.mark(bs.Box, refs, rc)
	return g
}

// forkWhy says why Fork is refused for a row, from the plan's fork (cached
// a few seconds per snapshot, so a tab of many rows stays fast), or "".
func (rb *RowBuilder) forkWhy(b *snapshots.Box, sn *snapshots.Snapshot, rc RowContext) string {
	if err := snapshots.MayAct(snapshots.Owner(), snapshots.ActFork, b, sn); err != nil {
		return RefusalWords(err)
	}
	switch sn.State {
	case snapshots.StateTaking, snapshots.StateFailed, snapshots.StateIncomplete, snapshots.StateLost, snapshots.StateUnavailable, snapshots.StateDeleting:
		return snapshots.CannotBeChangedWords(sn, snapshots.ChangeFork)
	}
	snapping := rb.core.Snapshotting(b)
	if snapping == nil || snapping.Fork == providers.ForkNone {
		if b.Kind == "qemu-windows" {
			return "Windows boxes do not fork until a unit builds Windows' identity reset."
		}
		return fmt.Sprintf("Boxes %s do not fork.", rb.WhereWords(b))
	}
	// The snapshot's own record says whether it was taken with the
	// identity reset (forkSafe: per snapshot, not per kind, since a kind's
	// reset may come after some of its snapshots were taken).
	if sn.ForkSafe == nil || *sn.ForkSafe <= 0 {
		return providers.NoResetWords(b.Name)
	}
	if b.ReleasedAt != nil || b.State != snapshots.BoxReady {
		// A released box's kept snapshot: its own plan says (a few rows).
		plan, err := rb.plans.snapshotPlan(rc.ctx, rb.core, b, sn.ID)
		switch {
		case err != nil:
			return RefusalWords(err)
		case !plan.Fork.OK && plan.Fork.Why != "":
			return plan.Fork.Why
		case !plan.Fork.OK:
			return snapshots.CannotBeForkedWords(sn.Name, rb.WhereWords(b))
		}
		return ""
	}
	// The box's plan says whether a fork can be made there now.
	plan, err := rb.plans.boxPlan(rc.ctx, rb.core, b)
	if err != nil {
		return RefusalWords(err)
	}
	if !plan.Fork.OK && plan.Fork.Why != "" && !strings.HasPrefix(plan.Fork.Why, "Taken before") {
		return plan.Fork.Why
	}
	return ""
}

// lookItems are a row's ways to look inside its snapshot: Browse files and
// Compare with now, each disabled with why where the backend cannot, or the
// snapshot or the box is not there to look at.
func (rb *RowBuilder) lookItems(b *snapshots.Box, sn *snapshots.Snapshot, base string) []MenuItem {
	browse := MenuItem{Text: "Browse files…", Label: fmt.Sprintf("Browse files of %s", sn.Name), Href: base + "/files", Page: true}
	compare := MenuItem{Text: "Compare with now…", Label: fmt.Sprintf("Compare with now: %s and %s", sn.Name, b.Name), Href: base + "/compare", Page: true}
	browse.Why = rb.contents.LookWhyNot(b, sn)
	compare.Why = browse.Why
	if compare.Why == "" && (b.State != snapshots.BoxReady || b.ReleasedAt != nil) {
		compare.Why = contents.NoBoxToCompareWords(b.Name, snapshots.BoxReleased)
	}
	return []MenuItem{browse, compare}
}

// exportWhy says why a snapshot cannot be exported or shared from its row,
// or "".
func (rb *RowBuilder) exportWhy(b *snapshots.Box, sn *snapshots.Snapshot) string {
	for _, be := range rb.core.Backends() {
		if be.ID == b.BackendID {
			if !be.Exports() {
				return fmt.Sprintf("%s cannot move snapshots out: boxsnap reads them only where they live.", be.Label)
			}
		}
	}
	if sn.State != snapshots.StateReady {
		return "Only a ready snapshot moves."
	}
	return ""
}

// moveItems are a row's Export… and Share code… menu items, disabled with
// why where the snapshot cannot move.
func (rb *RowBuilder) moveItems(b *snapshots.Box, sn *snapshots.Snapshot, base, q string) []MenuItem {
	why := rb.exportWhy(b, sn)
	return []MenuItem{
		{Text: "Export…", Label: fmt.Sprintf("Export %s…", sn.Name), Href: base + "/export" + q, Why: why},
		{Text: "Share code…", Label: fmt.Sprintf("A share code for %s…", sn.Name), Href: base + "/share" + q, Why: why},
	}
}

// ceilingWhy is why Keep or "Keep 30 more days" is off for sn: the
// ceiling's words where the rate held is past it.
func (rb *RowBuilder) ceilingWhy(ctx context.Context, _ *snapshots.Box, sn *snapshots.Snapshot) string {
	return rb.keeps.KeepCeiling(ctx, sn)
}

// RestoresOff reports whether the person's restore of b is off: threads
// run on it and Settings keeps such restores off.
func (rb *RowBuilder) RestoresOff(ctx context.Context, b *snapshots.Box) bool {
	if !restore.ThreadsRunOn(snapshots.Owner(), b) {
		return false
	}
	st, err := rb.core.Settings(ctx)
	return err != nil || !st.ExecutionMachineRestores
}

// RestoresOf reads a box's restores from its log (its newest events).
func (rb *RowBuilder) RestoresOf(rc RowContext, b *snapshots.Box) restores {
	evs, err := rb.boxes.BoxLog(rc.ctx, snapshots.Owner(), b.ID, 200)
	if err != nil {
		return restores{byOp: map[string]restore.RestoreResult{}}
	}
	return restoresIn(evs)
}
