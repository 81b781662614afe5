package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/providers"
)

// action is one control of a row: its accessible name, where it goes, and
// why it is disabled when it is.
type action struct {
	Label string
	Href  string
	Why   string
}

// Disabled reports whether the action is refused now.
func (a action) Disabled() bool { return a.Why != "" }

// boxHead is a card's head: the box, its kind badges, where it lives, its
// thread or "Your machine", and "released 12 Oct".
type boxHead struct {
	Name, Href  string
	Badges      []string
	Where       string
	Thread      string
	YourMachine bool
	Released    string
}

// menuItem is one item of a row's menu.
type menuItem struct {
	Text, Label, Href, Why, Copy string
	Post, Narrow                 bool
	// Page is set for an item that opens a page (Browse files, Compare),
	// not a dialog.
	Page bool
}

// snapRow is one snapshot's row.
type snapRow struct {
	ID, BoxName, Name, Note string
	Picture                 bool
	PicAlt, PicSrc          string
	// Screen is set for a box with a screen: a row without a picture
	// keeps the picture's place, so names line up.
	Screen bool
	// Restored marks the snapshot the box was last restored to.
	Restored string
	// Holds says what an undo holds: "amber-fox at 23:01, before
	// restoring to ‘before the migration’".
	Holds string
	// Off says why Restore or Fork is disabled, with its fix.
	Off                string
	Memory, Kept, Undo bool
	// Automatic marks a snapshot boxsnap took because the box changed.
	Automatic             bool
	Attention             string // amber words, what needs the owner first
	Failure               string // red words
	Line                  string
	Busy                  string // "Taking…", "Deleting…", "Restoring…": a spinner
	Restore, Fork, Rename action
	NoteA, Keep, Unkeep   action
	Delete                action
	// Renew is "Keep 30 more days" on a kept snapshot; GoesSoon puts it on
	// the row itself, beside "goes in 3 days" (section 7).
	Renew     action
	RenewText string
	GoesSoon  bool
	IsKept    bool
	Back      string
	Selecting bool
	Menu      []menuItem
}

// boxGroup is one box's card with its rows.
type boxGroup struct {
	ID, Name string
	Head     boxHead
	Rows     []snapRow
	// Busy is set while an operation of the box runs: the card polls.
	Busy     bool
	Announce string
	Done     string // said when a busy card settles
	LiveURL  string
	Total    int
	// Dense is the Snapshots tab's card: actions show on hover and focus.
	Dense bool
	// Now is the box page's first row: where the box is now.
	Now      *nowRow
	restores restores
}

// rowContext is what building rows needs once per request.
type rowContext struct {
	ctx     context.Context
	now     time.Time
	tz      *time.Location
	threads *threadTitles
	back    string // where dialogs return
	// keepDays is the setting's days, for "Keep 30 more days".
	keepDays int
	// selecting shows a checkbox on each row (the tab's Select).
	selecting bool
	// names are the names of the box's snapshots by ID, for "from ‘…’".
	names map[string]string
}

func (s *Server) rowContext(r *http.Request, back string) rowContext {
	ctx := r.Context()
	rc := rowContext{ctx: ctx, now: time.Now(), tz: s.opts.Core.TimeZone(ctx), back: back,
		selecting: r.URL.Query().Get("select") == "1", keepDays: snapshots.DefaultKeepDays,
		threads: &threadTitles{known: map[string]string{}, read: func(ids []string) (map[string]string, error) {
			return s.opts.Core.Boxes().ThreadTitles(ctx, snapshots.Owner(), ids)
		}}}
	if st, err := s.opts.Core.Settings(ctx); err == nil {
		rc.keepDays = st.KeepDays
	}
	return rc
}

// threadTitles are the titles of the threads a request's rows name, read
// as the rows need them: a page names its boxes' and snapshots' threads
// first (know), in one read, and a title asked for beyond them is read on
// its own. No page reads every thread of the install.
type threadTitles struct {
	known map[string]string
	read  func(ids []string) (map[string]string, error)
}

// know reads the titles of ids not yet known, in one read.
func (t *threadTitles) know(ids []string) {
	var unknown []string
	for _, id := range ids {
		if _, ok := t.known[id]; !ok && !slices.Contains(unknown, id) {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) == 0 {
		return
	}
	got, err := t.read(unknown)
	for _, id := range unknown {
		t.known[id] = "" // a thread that cannot be read is not asked again
	}
	if err != nil {
		return // the rows say the thread's ID where its title would be
	}
	maps.Copy(t.known, got)
}

// title is a thread's title, or "" when it cannot be read.
func (t *threadTitles) title(id string) string {
	t.know([]string{id})
	return t.known[id]
}

// knowBoxes reads the titles of the threads bs and their snapshots name.
func (t *threadTitles) knowBoxes(bs []snapshots.BoxSnapshots) {
	var ids []string
	for _, b := range bs {
		if b.Box != nil && b.Box.ThreadID != nil {
			ids = append(ids, *b.Box.ThreadID)
		}
		for _, sn := range b.Snapshots {
			if sn.ByThreadID != nil {
				ids = append(ids, *sn.ByThreadID)
			}
		}
	}
	t.know(ids)
}

// whenWords says when, as the rows do: "Today 10:42", "Yesterday 23:39",
// "Thu 09:15" within the week, "12 Oct" before.
func whenWords(t, now time.Time, tz *time.Location) string {
	t, now = t.In(tz), now.In(tz)
	y1, m1, d1 := t.Date()
	day := time.Date(y1, m1, d1, 0, 0, 0, 0, tz)
	y2, m2, d2 := now.Date()
	today := time.Date(y2, m2, d2, 0, 0, 0, 0, tz)
	switch days := int(today.Sub(day).Hours() / 24); {
	case days <= 0:
		return "Today " + t.Format("15:04")
	case days == 1:
		return "Yesterday " + t.Format("15:04")
	case days < 7:
		return t.Format("Mon 15:04")
	case y1 == y2:
		return t.Format("2 Jan")
	}
	return t.Format("2 Jan 2006")
}

// monthly is a price's rate a month, for the tab's line.
func monthly(raw json.RawMessage) float64 {
	var p providers.Price
	if len(raw) == 0 || json.Unmarshal(raw, &p) != nil || !p.Known {
		return 0
	}
	switch p.Per {
	case "day":
		return p.Amount * 30
	case "month":
		return p.Amount
	}
	return 0
}

// whereWords says where a box lives: "on this host", "Proxmox LXC on pve-1".
func (s *Server) whereWords(b *snapshots.Box) string {
	be, ok := s.opts.Core.BackendOf(b)
	label := b.BackendID
	if ok {
		label = be.Label
	}
	if ok && be.Kind == "local" {
		return "on " + label
	}
	if b.Host != "" && !strings.Contains(label, b.Host) {
		return fmt.Sprintf("%s on %s", label, b.Host)
	}
	return "on " + label
}

// onHost says where a box's space is taken, "on pve-1", as the Take
// dialog's words have it (section 12: "Up to 16 GiB more on pve-1").
func (s *Server) onHost(b *snapshots.Box) string {
	if be, ok := s.opts.Core.BackendOf(b); ok && be.Kind != "local" && b.Host != "" {
		return "on " + b.Host
	}
	return s.whereWords(b)
}

func kindBadges(b *snapshots.Box) []string {
	var out []string
	if b.System != "" {
		out = append(out, b.System)
	}
	if b.Kind != "" {
		// One home for a kind's words: kindWords.
		out = append(out, kindWords(b.Kind))
	}
	if b.HasScreen {
		out = append(out, "Desktop")
	}
	return out
}

func (s *Server) head(b *snapshots.Box, rc rowContext) boxHead {
	h := boxHead{Name: b.Name, Href: "/boxes/" + url.PathEscape(b.Name), Badges: kindBadges(b), Where: s.whereWords(b)}
	if b.ThreadID != nil {
		h.Thread = rc.threads.title(*b.ThreadID)
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

func refusalWords(err error) string {
	if err == nil {
		return ""
	}
	if r, ok := snapshots.AsRefusal(err); ok {
		return r.Words
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return "boxsnap cannot tell now: an internal error, which it logged."
	}
	return "boxsnap cannot tell now: " + err.Error()
}

// row builds one snapshot's row: badges, the one line in the
// specification's order, and each action with why it is refused.
func (s *Server) row(b *snapshots.Box, sn *snapshots.Snapshot, pins []snapshots.Pin, rc rowContext) snapRow {
	owner := snapshots.Owner()
	base := fmt.Sprintf("/boxes/%s/snapshots/%s", url.PathEscape(b.Name), sn.ID)
	q := "?back=" + url.QueryEscape(rc.back)
	r := snapRow{ID: sn.ID, BoxName: b.Name, Name: sn.Name, Memory: sn.Holds == string(providers.HoldsDiskAndMemory),
		Kept: sn.Kept(), Undo: sn.IsUndo(), IsKept: sn.Kept(), Back: rc.back, Selecting: rc.selecting, Automatic: sn.Automatic}
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
	// What needs attention comes first.
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
		left := sn.KeptUntil.Sub(rc.now)
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
			where += " on " + sn.Host // where it lives after its box's release (section 7)
		}
		attention = append(attention, where)
	}
	r.Attention = strings.Join(attention, " · ")
	thread := ""
	if sn.ByThreadID != nil {
		thread = rc.threads.title(*sn.ByThreadID)
	}
	why := ""
	if sn.ByWhy != nil {
		why = *sn.ByWhy
	}
	parts := []string{whenWords(sn.TakenAt, rc.now, rc.tz), snapshots.ByWords(sn.ByKind, thread, why), snapshots.HoldsWords(sn.Holds, sn.Scope)}
	parts = append(parts, snapshots.SizeWords(sn))
	if p := snapshots.PriceTag(snapshots.PriceOf(sn.Price)); p != "" {
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
			parts = append(parts, "from "+s.opts.Core.ParentName(rc.ctx, sn))
		}
	}
	r.Line = strings.Join(parts, " · ")

	snapping := s.opts.Core.Snapshotting(b)
	elig := func(act snapshots.Action, ch snapshots.Change) string {
		if err := snapshots.MayAct(owner, act, b, sn); err != nil {
			return refusalWords(err)
		}
		return refusalWords(snapshots.Eligible(sn, ch, pins, rc.now, rc.tz))
	}
	r.Restore = action{Label: fmt.Sprintf("Restore %s to %s", b.Name, sn.Name), Href: base + "/restore" + q}
	switch {
	case b.State == snapshots.BoxTrashed:
		r.Restore.Why = snapshots.InTrashWords(b.Name)
	case b.ReleasedAt != nil || b.State != snapshots.BoxReady:
		r.Restore.Why = fmt.Sprintf("%s is released: fork it instead.", b.Name)
	case snapping == nil || snapping.Restore == providers.RestoreNone:
		r.Restore.Why = fmt.Sprintf("Boxes on %s cannot be restored.", s.whereWords(b))
	case s.restoresOff(rc.ctx, b):
		r.Restore.Why = snapshots.ExecutionRestoresOffWords
	default:
		r.Restore.Why = elig(snapshots.ActRestore, snapshots.ChangeRestore)
		// Beyond the folders here, the snapshot's own plan says whether it
		// can be restored (ZFS restores only the newest, until checked):
		// the row's Restore is off with why, not a dialog that refuses.
		if be, ok := s.opts.Core.BackendOf(b); r.Restore.Why == "" && ok && be.Kind != "local" {
			if plan, err := s.plans.snapshotPlan(rc.ctx, s.opts.Core, b, sn.ID); err == nil && plan.Restore.Way == providers.WayNone && plan.Restore.Why != "" {
				r.Restore.Why = plan.Restore.Why
			}
		}
	}
	r.Fork = action{Label: fmt.Sprintf("Fork %s from %s", b.Name, sn.Name), Href: base + "/fork" + q, Why: s.forkWhy(b, sn, rc)}
	r.Rename = action{Label: fmt.Sprintf("Rename %s", sn.Name), Href: base + "/rename" + q, Why: elig(snapshots.ActRename, snapshots.ChangeRename)}
	r.NoteA = action{Label: fmt.Sprintf("Note on %s", sn.Name), Href: base + "/note" + q, Why: elig(snapshots.ActNote, snapshots.ChangeNote)}
	r.Keep = action{Label: fmt.Sprintf("Keep %s", sn.Name), Href: base + "/keep" + q, Why: elig(snapshots.ActKeep, snapshots.ChangeKeep)}
	if r.Keep.Why == "" && (snapping == nil || snapping.KeepsPastRelease == providers.KeepsNo || snapping.Fork == providers.ForkNone) {
		r.Keep.Why = snapshots.CannotBeKeptWords(b.Name)
	}
	if r.Keep.Why == "" {
		r.Keep.Why = s.ceilingWhy(rc.ctx, b, sn)
	}
	if sn.Kept() {
		r.Keep.Label = fmt.Sprintf("Keep %s longer", sn.Name)
	}
	if sn.Kept() {
		r.RenewText = snapshots.RenewWords(rc.keepDays)
		r.Renew = action{Label: fmt.Sprintf("%s for %s", snapshots.RenewWords(rc.keepDays), sn.Name), Href: base + "/renew", Why: r.Keep.Why}
	}
	r.Unkeep = action{Label: fmt.Sprintf("Stop keeping %s", sn.Name), Href: base + "/unkeep" + q, Why: elig(snapshots.ActUnkeep, snapshots.ChangeUnkeep)}
	r.Delete = action{Label: fmt.Sprintf("Delete %s", sn.Name), Href: base + "/delete" + q, Why: elig(snapshots.ActDelete, snapshots.ChangeDelete)}
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
	item := func(text string, a action) menuItem {
		return menuItem{Text: text, Label: a.Label + "…", Href: a.Href, Why: a.Why}
	}
	keepText := "Keep…"
	if sn.Kept() {
		keepText = "Keep longer…"
	}
	fork := item("Fork…", r.Fork)
	fork.Narrow = true
	// The safe actions first; then those that put the snapshot at risk:
	// Unsave…, Stop keeping, Delete….
	var risky []menuItem
	r.Menu = []menuItem{fork}
	for _, m := range saveItems(b, sn, base, q, elig) {
		if strings.HasPrefix(m.Text, "Unsave") {
			risky = append(risky, m)
		} else {
			r.Menu = append(r.Menu, m)
		}
	}
	r.Menu = append(r.Menu, item("Rename…", r.Rename), item("Note…", r.NoteA), item(keepText, r.Keep))
	if sn.Kept() {
		renew := item(snapshots.RenewWords(rc.keepDays), r.Renew)
		renew.Post, renew.Label = true, r.Renew.Label
		r.Menu = append(r.Menu, renew)
		m := item("Stop keeping", r.Unkeep)
		m.Post, m.Href, m.Label = true, base+"/unkeep", r.Unkeep.Label
		risky = append(risky, m)
	}
	r.Menu = append(r.Menu, s.lookItems(b, sn, base)...)
	r.Menu = append(r.Menu, s.moveItems(b, sn, base, q)...)
	r.Menu = append(r.Menu, menuItem{Text: "Copy ID", Copy: sn.ID})
	r.Menu = append(r.Menu, risky...)
	r.Menu = append(r.Menu, item("Delete…", r.Delete))
	return r
}

// group builds a box's card from the core's list.
func (s *Server) group(bs snapshots.BoxSnapshots, sns []*snapshots.Snapshot, rc rowContext, live string) boxGroup {
	return s.groupWith(bs, sns, rc, live, s.restoresOf(rc, bs.Box))
}

// groupWith is group with the box's restores as its page read them.
func (s *Server) groupWith(bs snapshots.BoxSnapshots, sns []*snapshots.Snapshot, rc rowContext, live string, rs restores) boxGroup {
	g := boxGroup{ID: "box-" + bs.Box.Name, Name: bs.Box.Name, Head: s.head(bs.Box, rc), LiveURL: live, Total: len(bs.Snapshots)}
	rc.names = make(map[string]string, len(bs.Snapshots))
	for _, sn := range bs.Snapshots {
		rc.names[sn.ID] = sn.Name
	}
	for _, sn := range sns {
		row := s.row(bs.Box, sn, bs.Pins[sn.ID], rc)
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
func (s *Server) forkWhy(b *snapshots.Box, sn *snapshots.Snapshot, rc rowContext) string {
	if err := snapshots.MayAct(snapshots.Owner(), snapshots.ActFork, b, sn); err != nil {
		return refusalWords(err)
	}
	switch sn.State {
	case snapshots.StateTaking, snapshots.StateFailed, snapshots.StateIncomplete, snapshots.StateLost, snapshots.StateUnavailable, snapshots.StateDeleting:
		return snapshots.CannotBeChangedWords(sn, snapshots.ChangeFork)
	}
	snapping := s.opts.Core.Snapshotting(b)
	if snapping == nil || snapping.Fork == providers.ForkNone {
		if b.Kind == "qemu-windows" {
			return "Windows boxes do not fork until a unit builds Windows' identity reset."
		}
		return fmt.Sprintf("Boxes %s do not fork.", s.whereWords(b))
	}
	// The snapshot's own record says whether it was taken with the
	// identity reset (forkSafe, section 9: per snapshot, not per kind).
	if sn.ForkSafe == nil || *sn.ForkSafe <= 0 {
		return providers.NoResetWords(b.Name)
	}
	if b.ReleasedAt != nil || b.State != snapshots.BoxReady {
		// A released box's kept snapshot: its own plan says (a few rows).
		plan, err := s.plans.snapshotPlan(rc.ctx, s.opts.Core, b, sn.ID)
		switch {
		case err != nil:
			return refusalWords(err)
		case !plan.Fork.OK && plan.Fork.Why != "":
			return plan.Fork.Why
		case !plan.Fork.OK:
			return snapshots.CannotBeForkedWords(sn.Name, s.whereWords(b))
		}
		return ""
	}
	// The box's plan says whether a fork can be made there now.
	plan, err := s.plans.boxPlan(rc.ctx, s.opts.Core, b)
	if err != nil {
		return refusalWords(err)
	}
	if !plan.Fork.OK && plan.Fork.Why != "" && !strings.HasPrefix(plan.Fork.Why, "Taken before") {
		return plan.Fork.Why
	}
	return ""
}

// lookItems are a row's ways to look inside its snapshot: Browse files and
// Compare with now, each disabled with why where the backend cannot, or the
// snapshot or the box is not there to look at.
func (s *Server) lookItems(b *snapshots.Box, sn *snapshots.Snapshot, base string) []menuItem {
	browse := menuItem{Text: "Browse files…", Label: fmt.Sprintf("Browse files of %s", sn.Name), Href: base + "/files", Page: true}
	compare := menuItem{Text: "Compare with now…", Label: fmt.Sprintf("Compare with now: %s and %s", sn.Name, b.Name), Href: base + "/compare", Page: true}
	browse.Why = s.opts.Contents.LookWhyNot(b, sn)
	compare.Why = browse.Why
	if compare.Why == "" && (b.State != snapshots.BoxReady || b.ReleasedAt != nil) {
		compare.Why = contents.NoBoxToCompareWords(b.Name, snapshots.BoxReleased)
	}
	return []menuItem{browse, compare}
}
