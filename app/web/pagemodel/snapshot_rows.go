package pagemodel

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// Action is one control of a row: its accessible name, where it goes, and
// why it is disabled when it is.
type Action struct {
	Label string
	Href  string
	Why   string
}

// Disabled reports whether the action is refused now.
func (a Action) Disabled() bool { return a.Why != "" }

// BoxHead is a card's head: the box, its kind badges, where it lives, its
// thread or "Your machine", and "released 12 Oct".
type BoxHead struct {
	Name, Href  string
	Badges      []string
	Where       string
	Thread      string
	YourMachine bool
	Released    string
}

// MenuItem is one item of a row's menu.
type MenuItem struct {
	Text, Label, Href, Why, Copy string
	Post, Narrow                 bool
	// Page is set for an item that opens a page (Browse files, Compare),
	// not a dialog.
	Page bool
}

// SnapRow is one snapshot's row.
type SnapRow struct {
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
	Restore, Fork, Rename Action
	NoteA, Keep, Unkeep   Action
	Delete                Action
	// Renew is "Keep 30 more days" on a kept snapshot; GoesSoon puts it on
	// the row itself, beside "goes in 3 days".
	Renew     Action
	RenewText string
	GoesSoon  bool
	IsKept    bool
	Back      string
	Selecting bool
	Menu      []MenuItem
}

// BoxGroup is one box's card with its rows.
type BoxGroup struct {
	ID, Name string
	Head     BoxHead
	Rows     []SnapRow
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

// KnowBoxes reads the titles of the threads bs and their snapshots name.
func (t *threadTitles) KnowBoxes(bs []snapshots.BoxSnapshots) {
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

// WhenWords says when, as the rows do: "Today 10:42", "Yesterday 23:39",
// "Thu 09:15" within the week, "12 Oct" before.
func WhenWords(t, now time.Time, tz *time.Location) string {
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

func kindBadges(b *snapshots.Box) []string {
	var out []string
	if b.System != "" {
		out = append(out, b.System)
	}
	if b.Kind != "" {
		// One home for a kind's words: KindWords.
		out = append(out, KindWords(b.Kind))
	}
	if b.HasScreen {
		out = append(out, "Desktop")
	}
	return out
}

func RefusalWords(err error) string {
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
