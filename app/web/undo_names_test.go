package web

import (
	"context"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// TestUndoNamesSayUndo: two restores within a minute give undos whose
// names say when, each unique, never "(2)"; the page calls each an undo,
// and restoring one opens a dialog that says Undo.
func TestUndoNamesSayUndo(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	ctx := context.Background()
	b := s.env.Box(t, snapshots.Owner(), "brisk-lake")
	op, sn, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: b.Name, Name: "clean install"})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, op)
	var undos []*snapshots.Snapshot
	for len(undos) < 2 {
		rop, err := s.env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: b.Name, Snapshot: sn.ID})
		if err != nil {
			t.Fatal(err)
		}
		s.env.Wait(t, rop)
		list, _ := s.env.Core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: b.Name})
		undos = undos[:0]
		for _, x := range list[0].Snapshots {
			if x.IsUndo() {
				undos = append(undos, x)
			}
		}
	}
	names := map[string]bool{}
	named := regexp.MustCompile(`^before the restore at \d\d:\d\d(:\d\d)?$`)
	for _, u := range undos {
		if !named.MatchString(u.Name) || names[u.Name] {
			t.Errorf("an undo is named %q (all: %v)", u.Name, names)
		}
		names[u.Name] = true
	}
	page := s.do(t, "GET", "/boxes/brisk-lake", nil, nil).Body.String()
	for _, u := range undos {
		row := page[strings.Index(page, `id="snap-`+u.ID+`"`):]
		row = row[:strings.Index(row, "</div>")]
		if !strings.Contains(row, `<span class="badge">Undo</span>`) {
			t.Errorf("the page does not call %q an undo:\n%s", u.Name, row)
		}
	}
	d := html.UnescapeString(s.do(t, "GET", "/boxes/brisk-lake/snapshots/"+undos[0].ID+"/restore", nil, nil).Body.String())
	if !strings.Contains(d, "Undo: put brisk-lake back to ‘"+undos[0].Name+"’?") || !strings.Contains(d, `data-submit="Undo`) {
		t.Errorf("the undo's dialog does not say Undo:\n%s", d)
	}
}
