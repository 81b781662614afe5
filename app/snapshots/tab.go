package snapshots

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// TabQueries are the Snapshots tab's queries (sql/queries/tab.sql).
var TabQueries = []string{"TabPage", "TabBoxesByID", "TabSnapshotsOfBoxes", "TabTally", "TabTotals", "TabBoxKinds", "TabLiveBoxPerKind"}

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
	// Where is a box's backend and host, "backend:host", as TabTally
	// counts them.
	Where string
	// Holds is disk, disk-and-memory or device.
	Holds string
	// By is "you" (the person or the CLI) or "agents".
	By string
	// Kept, Undos and Soon keep kept snapshots, undos, and kept snapshots
	// whose keep ends within EndingSoonDays of Now.
	Kept, Undos, Soon bool
	// Now is when Soon counts from; zero is the core's clock.
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
	BoxSnapshots
	Matched []*Snapshot
}

// TabPage is one page of the Snapshots tab's boxes.
type TabPage struct {
	Boxes []TabBox
	// Next is the cursor of the page after this one, or "" at the end.
	Next string
	// BoxesMatching and SnapshotsMatching count every page's.
	BoxesMatching, SnapshotsMatching int
}

type tabRow struct {
	BoxID             string   `db:"box_id"`
	BoxName           string   `db:"box_name"`
	Released          int32    `db:"released"`
	SortKey           string   `db:"sort_key"`
	BoxesMatching     int64    `db:"boxes_matching"`
	SnapshotsMatching int64    `db:"snapshots_matching"`
	BoxesLeft         int64    `db:"boxes_left"`
	Matched           []string `db:"matched"`
}

// tabCursor is where a page ends: its last row's sort key, released flag,
// box name and box ID, the columns TabPage orders by.
type tabCursor struct {
	key      string
	released int32
	name, id string
}

var decimalKey = regexp.MustCompile(`^-?[0-9]{1,30}(\.[0-9]{1,30})?$`)

func (c tabCursor) String() string {
	raw := strings.Join([]string{c.key, strconv.Itoa(int(c.released)), c.name, c.id}, "\x00")
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func parseTabCursor(s string) (*tabCursor, error) {
	bad := refuse(CodeInvalid, http.StatusBadRequest, "after is not a place this listing gave; start again from the first page.")
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad
	}
	parts := strings.Split(string(raw), "\x00")
	if len(parts) != 4 || !decimalKey.MatchString(parts[0]) || (parts[1] != "0" && parts[1] != "1") || parts[3] == "" {
		return nil, bad
	}
	rel, _ := strconv.Atoi(parts[1])
	return &tabCursor{key: parts[0], released: int32(rel), name: parts[2], id: parts[3]}, nil
}

// likePattern is an ILIKE pattern that finds s anywhere, its own wildcards
// taken as themselves.
func likePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// Tab answers one page of the Snapshots tab for c: the boxes with a
// snapshot that matches q, in q's order, each with its snapshots. The
// search, filters, sort, counts and the page are the database's (TabPage);
// the core reads in full only the page's boxes.
func (s *Service) Tab(ctx context.Context, c Caller, q TabQuery) (*TabPage, error) {
	if c.Kind != CallerOwner && c.Kind != CallerCLI && c.Kind != CallerAgent && c.Kind != CallerSystem {
		return nil, refuse(CodeForbidden, http.StatusForbidden, "Sign in first.")
	}
	sort := q.Sort
	switch sort {
	case "":
		sort = "newest"
	case "newest", "oldest", "largest", "price", "box", SortBoxes:
	default:
		return nil, refuse(CodeInvalid, http.StatusBadRequest, "sort is newest, oldest, largest, price or box.")
	}
	if q.Limit < 1 || q.Limit > 500 {
		return nil, refuse(CodeInvalid, http.StatusBadRequest, "A page holds 1 to 500 boxes.")
	}
	args := map[string]any{
		"search": nil, "backend_id": nil, "host": nil, "holds": nil, "by_kinds": nil, "kept": q.Kept, "undos": q.Undos,
		"soon_before": nil, "thread": nil, "sort": sort, "after_key": nil, "after_released": nil, "after_name": nil, "after_id": nil,
		"page_size": q.Limit, "row_budget": nil,
	}
	if q.Rows > 0 {
		args["row_budget"] = q.Rows
	}
	if q.Search != "" {
		args["search"] = likePattern(q.Search)
	}
	if q.Where != "" {
		be, host, ok := strings.Cut(q.Where, ":")
		if !ok {
			return &TabPage{}, nil // no box lives nowhere
		}
		args["backend_id"], args["host"] = be, host
	}
	if q.Holds != "" {
		args["holds"] = q.Holds
	}
	switch q.By {
	case "you":
		args["by_kinds"] = []string{"owner", "cli"}
	case "agents":
		args["by_kinds"] = []string{"agent"}
	}
	if q.Soon {
		now := q.Now
		if now.IsZero() {
			now = s.now()
		}
		args["soon_before"] = now.Add(EndingSoonDays * 24 * time.Hour)
	}
	if c.Kind == CallerAgent {
		args["thread"] = c.Thread
	}
	if q.After != "" {
		cur, err := parseTabCursor(q.After)
		if err != nil {
			return nil, err
		}
		args["after_key"], args["after_released"], args["after_name"], args["after_id"] = cur.key, cur.released, cur.name, cur.id
	}
	rows, err := s.tabQuery(ctx, "TabPage", args)
	if err != nil {
		return nil, err
	}
	found, err := pgx.CollectRows(rows, pgx.RowToStructByName[tabRow])
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
		tb := TabBox{BoxSnapshots: BoxSnapshots{Box: b, Pins: map[string][]Pin{}}}
		byID := map[string]*Snapshot{}
		for _, sn := range snaps[r.BoxID] {
			if MayAct(c, ActSee, b, sn) != nil {
				continue
			}
			tb.Snapshots = append(tb.Snapshots, sn)
			byID[sn.ID] = sn
			if p := pins[sn.ID]; p != nil {
				tb.Pins[sn.ID] = p
			}
		}
		for _, id := range r.Matched {
			if sn := byID[id]; sn != nil {
				tb.Matched = append(tb.Matched, sn)
			}
		}
		if len(tb.Matched) > 0 {
			page.Boxes = append(page.Boxes, tb)
		}
	}
	return page, nil
}

// tabBoxes reads the page's boxes, all their snapshots (newest first) and
// the pins of the operations running now.
func (s *Service) tabBoxes(ctx context.Context, ids []string) (map[string]*Box, map[string][]*Snapshot, map[string][]Pin, error) {
	rows, err := s.tabQuery(ctx, "TabBoxesByID", map[string]any{"ids": ids})
	if err != nil {
		return nil, nil, nil, err
	}
	bs, err := pgx.CollectRows(rows, pgx.RowToAddrOfStructByName[Box])
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read the page's boxes: %w", err)
	}
	boxes := make(map[string]*Box, len(bs))
	for _, b := range bs {
		boxes[b.ID] = b
	}
	rows, err = s.tabQuery(ctx, "TabSnapshotsOfBoxes", map[string]any{"box_ids": ids})
	if err != nil {
		return nil, nil, nil, err
	}
	all, err := pgx.CollectRows(rows, pgx.RowToAddrOfStructByName[Snapshot])
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read the page's snapshots: %w", err)
	}
	snaps := map[string][]*Snapshot{}
	for _, sn := range all {
		snaps[sn.BoxID] = append(snaps[sn.BoxID], sn)
	}
	pins, err := s.activePins(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	return boxes, snaps, pins, nil
}

// TallyRow is the tab's counts for the snapshots of boxes on one backend
// and host that hold one thing (disk, disk-and-memory or device).
type TallyRow struct {
	BackendID string `db:"backend_id"`
	Host      string `db:"host"`
	Holds     string `db:"holds"`
	Snapshots int    `db:"snapshots"`
	ByYou     int    `db:"by_you"`
	ByAgents  int    `db:"by_agents"`
	Kept      int    `db:"kept"`
	Undos     int    `db:"undos"`
	// Soon counts the kept snapshots whose keep ends within EndingSoonDays.
	Soon   int `db:"soon"`
	Failed int `db:"failed"`
	// Sized counts those of known size; SizeBytes is their sum.
	Sized     int     `db:"sized"`
	SizeBytes int64   `db:"size_bytes"`
	Monthly   float64 `db:"monthly"`
}

// TabTally counts every snapshot of the install for the person's tab, in
// one grouped query: by backend and host, and by what it holds.
func (s *Service) TabTally(ctx context.Context, c Caller, now time.Time) ([]TallyRow, error) {
	if !c.IsPerson() {
		return nil, refuse(CodeForbidden, http.StatusForbidden, "Only the person sees the whole install's counts.")
	}
	rows, err := s.tabQuery(ctx, "TabTally", map[string]any{"soon_before": now.Add(EndingSoonDays * 24 * time.Hour)})
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[TallyRow])
	if err != nil {
		return nil, fmt.Errorf("read the tab's counts: %w", err)
	}
	return out, nil
}

// Totals are the Boxes page's tabs' counts: live machines, threads and
// snapshots.
type Totals struct {
	Machines  int `db:"machines"`
	Threads   int `db:"threads"`
	Snapshots int `db:"snapshots"`
}

// Totals counts the person's machines, threads and, with snaps, snapshots.
func (s *Service) Totals(ctx context.Context, c Caller, snaps bool) (Totals, error) {
	if !c.IsPerson() {
		return Totals{}, refuse(CodeForbidden, http.StatusForbidden, "Only the person sees the whole install's counts.")
	}
	rows, err := s.tabQuery(ctx, "TabTotals", map[string]any{"count_snapshots": snaps})
	if err != nil {
		return Totals{}, err
	}
	t, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Totals])
	if err != nil {
		return Totals{}, fmt.Errorf("count the boxes' tabs: %w", err)
	}
	return t, nil
}

// BoxKind is a kind of box a backend has.
type BoxKind struct {
	BackendID string `db:"backend_id"`
	Kind      string `db:"kind"`
}

// BoxKinds lists each backend's kinds of box.
func (s *Service) BoxKinds(ctx context.Context) ([]BoxKind, error) {
	rows, err := s.tabQuery(ctx, "TabBoxKinds", map[string]any{})
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[BoxKind])
	if err != nil {
		return nil, fmt.Errorf("read the kinds of box: %w", err)
	}
	return out, nil
}

// LiveBoxPerKind lists one live box for each backend, kind and host, the
// first by name, in name order: what a host's plan is read through, without
// reading every box.
func (s *Service) LiveBoxPerKind(ctx context.Context) ([]*Box, error) {
	rows, err := s.tabQuery(ctx, "TabLiveBoxPerKind", map[string]any{})
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowToAddrOfStructByName[Box])
	if err != nil {
		return nil, fmt.Errorf("read a live box per kind: %w", err)
	}
	return out, nil
}

// activePins are the snapshots the running operations use, by snapshot.
func (s *Service) activePins(ctx context.Context) (map[string][]Pin, error) {
	rows, err := s.st.Pool.Query(ctx, s.st.Q("CorePinsOfBox"))
	if err != nil {
		return nil, fmt.Errorf("read pins: %w", err)
	}
	type pinRow struct {
		Snapshot string `db:"snapshot"`
		Pin
	}
	pinRows, err := pgx.CollectRows(rows, pgx.RowToStructByName[pinRow])
	if err != nil {
		return nil, fmt.Errorf("read pins: %w", err)
	}
	pins := map[string][]Pin{}
	for _, p := range pinRows {
		pins[p.Snapshot] = append(pins[p.Snapshot], p.Pin)
	}
	return pins, nil
}

// tabQuery runs a named tab query with its sqlc arguments by name. It is
// planned for its arguments (an unnamed statement), so a filter that is off
// folds away and the plan reads the indexes of those that are on.
func (s *Service) tabQuery(ctx context.Context, name string, named map[string]any) (pgx.Rows, error) {
	text, order := Positional(s.st.Q(name))
	args := []any{pgx.QueryExecModeDescribeExec}
	for _, n := range order {
		v, ok := named[n]
		if !ok {
			return nil, fmt.Errorf("%s: no value for %s", name, n)
		}
		args = append(args, v)
	}
	rows, err := s.st.Pool.Query(ctx, text, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return rows, nil
}

// TabSQL is a named tab query as the database runs it, with its arguments'
// names in order: what a test EXPLAINs.
func (s *Service) TabSQL(name string) (string, []string) { return Positional(s.st.Q(name)) }

var sqlcArg = regexp.MustCompile(`sqlc\.n?arg\(([a-z_][a-z0-9_]*)\)`)

// Positional turns sqlc's named arguments (sqlc.arg(x), sqlc.narg(x)) into
// PostgreSQL's $1, $2, ..., numbered by first use, and says the names in
// that order.
func Positional(q string) (string, []string) {
	var order []string
	num := map[string]int{}
	out := sqlcArg.ReplaceAllStringFunc(q, func(m string) string {
		n := sqlcArg.FindStringSubmatch(m)[1]
		if _, ok := num[n]; !ok {
			order = append(order, n)
			num[n] = len(order)
		}
		return "$" + strconv.Itoa(num[n])
	})
	return out, order
}
