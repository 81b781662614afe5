package tab

import (
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"log/slog"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// Tab is the lists of the Snapshots tab and the Boxes page: a page of the
// tab's boxes and their snapshots, searched, filtered and sorted
// (Snapshots), its counts (Tally), the Boxes page's tabs' counts (Totals),
// each backend's kinds of box (BoxKinds) and one live box of each kind
// (LiveBoxPerKind). Each reads through the store's Reader, so a page that
// asks within one read (store.ReadOnce) gets rows and counts of one moment.
// Pick reads the snapshots the Select mode picked, by ID.
type Tab struct {
	st     *store.Store
	k      kernel
	now    func() time.Time
	logger *slog.Logger
}

// kernel is what the tab reads through the core's kernel: the pins of the
// operations running now (*snapshots.Kernel has it).
type kernel interface {
	AllPins(ctx context.Context, q db.DBTX) (map[string][]snapshots.Pin, error)
}

// New makes the tab's lists on st, reading pins through k; now is the
// clock (nil: time.Now) and logger says what the tab could not fold (nil:
// nothing).
func New(st *store.Store, k kernel, now func() time.Time, logger *slog.Logger) *Tab {
	if now == nil {
		now = time.Now
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Tab{st: st, k: k, now: now, logger: logger}
}

// TabSorts are the orders of the Snapshots tab's boxes: by their newest,
// oldest, largest or priciest matching snapshot, or by the box's name. The
// API lists boxes as SortBoxes does: live ones first, then by name.
var TabSorts = []string{"newest", "oldest", "largest", "price", "box"}

// SortBoxes is the API's order of boxes: live before released, by name.
const SortBoxes = "boxes"

// TabQuery asks for one page of the Snapshots tab: its search, filters and
// sort, and where the page starts.
type TabQuery struct {
	// Search is a part of a snapshot's name or note, its box's name or its
	// thread's title, in any case.
	Search string
	// Where is a box's backend and host, "backend:host", as Tally
	// counts them.
	Where string
	// Holds is disk, disk-and-memory or device.
	Holds string
	// By is "you" (the person or the CLI) or "agents".
	By string
	// Kept, Undos and Soon keep kept snapshots, undos, and kept snapshots
	// whose keep ends within snapshots.EndingSoonDays of Now.
	Kept, Undos, Soon bool
	// Automatic, when set, keeps automatic snapshots (true) or saved ones.
	Automatic *bool
	// Now is when Soon counts from; zero is the tab's clock.
	Now time.Time
	// Sort is one of TabSorts or SortBoxes; "" is newest.
	Sort string
	// After is a page's Next: the page starts after it.
	After string
	// Limit is how many boxes a page holds (1 to 500).
	Limit int
	// Rows, when above 0, ends a page before the box that would take its
	// matching snapshots past Rows (a page holds its first box whole).
	Rows int
}

// TabBox is one box of a page: the box, every snapshot of it the caller may
// see (with their pins), and those that match, in the sort's order.
type TabBox struct {
	snapshots.BoxSnapshots
	Matched []*snapshots.Snapshot
}

// TabPage is one page of the Snapshots tab's boxes.
type TabPage struct {
	Boxes []TabBox
	// Next is the cursor of the page after this one, or "" at the end.
	Next string
	// BoxesMatching and SnapshotsMatching count every page's, when a
	// search or filter narrows the list (0 when nothing does).
	BoxesMatching, SnapshotsMatching int
}

// tabCursor is where a page ends: its last row's sort key, released flag,
// box name and box ID, the columns TabPage orders by.
type tabCursor struct {
	key      string
	released int
	name, id string
}

var decimalKey = regexp.MustCompile(`^-?[0-9]{1,30}(\.[0-9]{1,30})?$`)

func (c tabCursor) String() string {
	raw := strings.Join([]string{c.key, strconv.Itoa(c.released), c.name, c.id}, "\x00")
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func parseTabCursor(s string) (*tabCursor, error) {
	bad := refusal(snapshots.CodeInvalid, snapshots.AfterNotAPlaceWords)
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad
	}
	parts := strings.Split(string(raw), "\x00")
	if len(parts) != 4 || !decimalKey.MatchString(parts[0]) || (parts[1] != "0" && parts[1] != "1") || parts[3] == "" {
		return nil, bad
	}
	rel, _ := strconv.Atoi(parts[1])
	return &tabCursor{key: parts[0], released: rel, name: parts[2], id: parts[3]}, nil
}

func ptr[T any](v T) *T { return &v }

// likePattern is an ILIKE pattern that finds s anywhere, its own wildcards
// taken as themselves.
func likePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// Snapshots answers one page of the Snapshots tab for c: the boxes with a
// snapshot that matches q, in q's order, each with its snapshots. The
// search, filters, sort, counts and the page are the database's (TabPage);
// the tab reads in full only the page's boxes.
func (s *Tab) Snapshots(ctx context.Context, c snapshots.Caller, q TabQuery) (*TabPage, error) {
	sort, err := checkTabQuery(c, q)
	if err != nil {
		return nil, err
	}
	if c.IsPerson() && sort == "newest" && q.Search == "" && q.Where == "" && q.Holds == "" && q.By != "you" && q.By != "agents" &&
		!q.Kept && !q.Undos && !q.Soon && q.Automatic == nil {
		return s.newestPage(ctx, q)
	}
	arg, ok, err := s.tabPageParams(c, q, sort)
	if err != nil {
		return nil, err
	}
	if !ok {
		return &TabPage{}, nil // no box lives nowhere
	}
	found, err := s.st.TabPage(ctx, snapshots.Planned(s.st.Reader(ctx)), arg)
	if err != nil {
		return nil, fmt.Errorf("read the tab's page: %w", err)
	}
	page := &TabPage{}
	if len(found) > 0 {
		page.BoxesMatching, page.SnapshotsMatching = int(found[0].BoxesMatching), int(found[0].SnapshotsMatching)
	}
	if len(found) > 0 && int64(len(found)) < found[0].BoxesLeft {
		last := found[len(found)-1]
		page.Next = tabCursor{key: last.SortKey, released: last.Released, name: last.BoxName, id: last.BoxID}.String()
	}
	if len(found) == 0 {
		return page, nil
	}
	ids := make([]string, len(found))
	for i, r := range found {
		ids[i] = r.BoxID
	}
	boxes, snaps, pins, err := s.tabBoxes(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, r := range found {
		b := boxes[r.BoxID]
		if b == nil {
			continue // gone between the two reads
		}
		if tb := tabBoxFor(c, b, snaps[r.BoxID], pins, r.Matched); len(tb.Matched) > 0 {
			page.Boxes = append(page.Boxes, tb)
		}
	}
	return page, nil
}

// checkTabQuery refuses a caller who may not see the tab, and a query
// whose sort or page size is none the tab has; it gives the sort, newest
// when q names none.
func checkTabQuery(c snapshots.Caller, q TabQuery) (string, error) {
	if c.Kind != snapshots.CallerOwner && c.Kind != snapshots.CallerCLI && c.Kind != snapshots.CallerAgent && c.Kind != snapshots.CallerSystem {
		return "", refusal(snapshots.CodeForbidden, snapshots.SignInWords)
	}
	sort := q.Sort
	switch sort {
	case "":
		sort = "newest"
	case "newest", "oldest", "largest", "price", "box", SortBoxes:
	default:
		return "", refusal(snapshots.CodeInvalid, sortIsWords)
	}
	if q.Limit < 1 || q.Limit > 500 {
		return "", refusal(snapshots.CodeInvalid, snapshots.PageHoldsWords)
	}
	return sort, nil
}

// tabPageParams gives TabPage's parameters for q, sorted by sort, as c
// sees the tab (an agent its own thread's). ok is false for a where that
// names no host: no box lives there.
func (s *Tab) tabPageParams(c snapshots.Caller, q TabQuery, sort string) (arg db.TabPageParams, ok bool, err error) {
	arg = db.TabPageParams{Sort: sort, PageSize: q.Limit, Kept: q.Kept, Undos: q.Undos, Automatic: q.Automatic}
	if q.Rows > 0 {
		rows := int64(q.Rows)
		arg.RowBudget = &rows
	}
	if q.Search != "" {
		arg.Search = ptr(likePattern(q.Search))
	}
	if q.Where != "" {
		be, host, ok := strings.Cut(q.Where, ":")
		if !ok {
			return arg, false, nil
		}
		arg.BackendID, arg.Host = &be, &host
	}
	if q.Holds != "" {
		arg.Holds = &q.Holds
	}
	switch q.By {
	case "you":
		arg.ByKinds = []string{"owner", "cli"}
	case "agents":
		arg.ByKinds = []string{"agent"}
	}
	if q.Soon {
		now := q.Now
		if now.IsZero() {
			now = s.now()
		}
		arg.SoonBefore = ptr(now.Add(snapshots.EndingSoonDays * 24 * time.Hour))
	}
	if c.Kind == snapshots.CallerAgent {
		arg.Thread = &c.Thread
	}
	if q.After != "" {
		cur, err := parseTabCursor(q.After)
		if err != nil {
			return arg, false, err
		}
		arg.AfterKey, arg.AfterReleased, arg.AfterName, arg.AfterID = &cur.key, &cur.released, &cur.name, &cur.id
	}
	return arg, true, nil
}

// tabBoxFor gives box b as the tab shows it to c: the snapshots c may see,
// their pins, and those of matched among them.
func tabBoxFor(c snapshots.Caller, b *snapshots.Box, snaps []*snapshots.Snapshot, pins map[string][]snapshots.Pin, matched []string) TabBox {
	tb := TabBox{BoxSnapshots: snapshots.BoxSnapshots{Box: b, Pins: map[string][]snapshots.Pin{}}}
	byID := map[string]*snapshots.Snapshot{}
	for _, sn := range snaps {
		if snapshots.MayAct(c, snapshots.ActSee, b, sn) != nil {
			continue
		}
		tb.Snapshots = append(tb.Snapshots, sn)
		byID[sn.ID] = sn
		if p := pins[sn.ID]; p != nil {
			tb.Pins[sn.ID] = p
		}
	}
	for _, id := range matched {
		if sn := byID[id]; sn != nil {
			tb.Matched = append(tb.Matched, sn)
		}
	}
	return tb
}

// newestPage is the person's first view (no search or filter, newest
// first): the boxes in the order of their newest snapshot, walked from the
// newest snapshot down and stopped at the page, so its cost follows the
// page, not the install. Boxes whose newest snapshots were taken at the
// same instant come in the order of those snapshots' IDs. It counts no
// matches (nothing narrows the list).
func (s *Tab) newestPage(ctx context.Context, q TabQuery) (*TabPage, error) {
	arg := db.TabNewestBoxesParams{PageSize: q.Limit + 1}
	if q.After != "" {
		taken, id, ok := parseNewestCursor(q.After)
		if !ok {
			return nil, refusal(snapshots.CodeInvalid, snapshots.AfterNotAPlaceWords)
		}
		arg.AfterTaken, arg.AfterID = &taken, &id
	}
	heads, err := s.st.TabNewestBoxes(ctx, snapshots.Planned(s.st.Reader(ctx)), arg)
	if err != nil {
		return nil, fmt.Errorf("read the tab's page: %w", err)
	}
	page := &TabPage{}
	if len(heads) == 0 {
		return page, nil
	}
	ids := make([]string, 0, q.Limit)
	for _, h := range heads[:min(len(heads), q.Limit)] {
		ids = append(ids, h.BoxID)
	}
	boxes, snaps, pins, err := s.tabBoxes(ctx, ids)
	if err != nil {
		return nil, err
	}
	rows, used := 0, 0
	for i, id := range ids {
		sns := snaps[id]
		if i > 0 && q.Rows > 0 && rows+len(sns) > q.Rows {
			break
		}
		used, rows = i+1, rows+len(sns)
		b := boxes[id]
		if b == nil || len(sns) == 0 {
			continue // gone between the reads
		}
		tb := TabBox{BoxSnapshots: snapshots.BoxSnapshots{Box: b, Snapshots: sns, Pins: map[string][]snapshots.Pin{}}, Matched: sns}
		for _, sn := range sns {
			if p := pins[sn.ID]; p != nil {
				tb.Pins[sn.ID] = p
			}
		}
		page.Boxes = append(page.Boxes, tb)
	}
	if used < len(heads) {
		last := heads[used-1]
		page.Next = newestCursor(last.TakenAt, last.ID)
	}
	return page, nil
}

// newestCursor is where a page of the first view ends: its last box's
// newest snapshot.
func newestCursor(taken time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("newest\x00" + strconv.FormatInt(taken.UnixMicro(), 10) + "\x00" + id))
}

func parseNewestCursor(s string) (time.Time, string, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return time.Time{}, "", false
	}
	parts := strings.Split(string(raw), "\x00")
	if len(parts) != 3 || parts[0] != "newest" || parts[2] == "" {
		return time.Time{}, "", false
	}
	us, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return time.Time{}, "", false
	}
	return time.UnixMicro(us), parts[2], true
}

// tabBoxes reads the page's boxes, all their snapshots (newest first) and
// the pins of the operations running now.
func (s *Tab) tabBoxes(ctx context.Context, ids []string) (map[string]*snapshots.Box, map[string][]*snapshots.Snapshot, map[string][]snapshots.Pin, error) {
	bs, err := snapshots.BoxRows(s.st.TabBoxesByID(ctx, s.st.Reader(ctx), ids))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read the page's boxes: %w", err)
	}
	boxes := make(map[string]*snapshots.Box, len(bs))
	for _, b := range bs {
		boxes[b.ID] = b
	}
	all, err := snapshots.SnapshotRows(s.st.TabSnapshotsOfBoxes(ctx, s.st.Reader(ctx), ids))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read the page's snapshots: %w", err)
	}
	snaps := map[string][]*snapshots.Snapshot{}
	for _, sn := range all {
		snaps[sn.BoxID] = append(snaps[sn.BoxID], sn)
	}
	pins, err := s.k.AllPins(ctx, s.st.Reader(ctx))
	if err != nil {
		return nil, nil, nil, err
	}
	return boxes, snaps, pins, nil
}

// TallyRow is the tab's counts for the snapshots of boxes on one backend
// and host that hold one thing (Holds: disk, disk-and-memory or device),
// priced in one currency (Currency, "" for none): Sized counts those of
// known size (SizeBytes the sum of their sizes as their rows say them,
// providers.Shown), Monthly their price a month.
type TallyRow = db.TabTallyRow

// Tally is the tab's counts of every snapshot of the install.
type Tally struct {
	Rows []TallyRow
	// Soon counts the kept snapshots whose keep ends within
	// snapshots.EndingSoonDays.
	Soon int
}

// tallyFoldAt is how many rows of snapshot_tally past one per group make
// Tally fold them.
const tallyFoldAt = 256

// Tally counts every snapshot of the install for the person's tab
// without reading it: the counts are kept beside the records, in the same
// transaction, by the database (migration 00140); only the keeps ending
// soon, which the clock changes, are counted, through an index of the kept
// ones. When the kept counts' rows have grown, it folds them.
func (s *Tab) Tally(ctx context.Context, c snapshots.Caller, now time.Time) (*Tally, error) {
	if !c.IsPerson() {
		return nil, refusal(snapshots.CodeForbidden, onlyPersonSeesCountsWords)
	}
	rows, err := s.st.TabTally(ctx, s.st.Reader(ctx))
	if err != nil {
		return nil, fmt.Errorf("read the tab's counts: %w", err)
	}
	soon, err := s.st.TabSoon(ctx, s.st.Reader(ctx), now.Add(snapshots.EndingSoonDays*24*time.Hour))
	if err != nil {
		return nil, fmt.Errorf("count the keeps ending soon: %w", err)
	}
	deltas := 0
	for _, r := range rows {
		deltas += r.Deltas
	}
	if deltas > len(rows)+tallyFoldAt {
		// The fold writes, so it runs on the pool, beside a page's one read.
		if err := s.st.TabTallyCompact(ctx, s.st.Pool); err != nil {
			s.logger.Warn("fold the tab's counts", "err", err)
		}
	}
	return &Tally{Rows: rows, Soon: soon}, nil
}

// Totals are the Boxes page's tabs' counts: live machines, threads and
// snapshots.
type Totals struct {
	// Machines counts the live boxes; Trash those in the trash, which are
	// not among them.
	Machines, Threads, Snapshots, Trash int
}

// Totals counts the person's machines, threads and, with snaps, snapshots.
func (s *Tab) Totals(ctx context.Context, c snapshots.Caller, snaps bool) (Totals, error) {
	if !c.IsPerson() {
		return Totals{}, refusal(snapshots.CodeForbidden, onlyPersonSeesCountsWords)
	}
	t, err := s.st.TabTotals(ctx, s.st.Reader(ctx), snaps)
	if err != nil {
		return Totals{}, fmt.Errorf("count the boxes' tabs: %w", err)
	}
	trash, err := s.st.TrashCount(ctx, s.st.Reader(ctx))
	if err != nil {
		return Totals{}, fmt.Errorf("count the trash: %w", err)
	}
	return Totals{Machines: t.Machines - int(trash), Threads: t.Threads, Snapshots: t.Snapshots, Trash: int(trash)}, nil
}

// BoxKind is a kind of box a backend has.
type BoxKind = db.TabBoxKindsRow

// BoxKinds lists each backend's kinds of box.
func (s *Tab) BoxKinds(ctx context.Context) ([]BoxKind, error) {
	out, err := s.st.TabBoxKinds(ctx, s.st.Reader(ctx))
	if err != nil {
		return nil, fmt.Errorf("read the kinds of box: %w", err)
	}
	return out, nil
}

// LiveBoxPerKind lists one live box for each backend, kind and host, the
// first by name, in name order: what a host's plan is read through, without
// reading every box.
func (s *Tab) LiveBoxPerKind(ctx context.Context) ([]*snapshots.Box, error) {
	out, err := snapshots.BoxRows(s.st.TabLiveBoxPerKind(ctx, s.st.Reader(ctx)))
	if err != nil {
		return nil, fmt.Errorf("read a live box per kind: %w", err)
	}
	return out, nil
}
