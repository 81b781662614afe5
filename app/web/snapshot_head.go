package web

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
)

// headItems is a row's "Set as head": a ready snapshot of a box that is
// here, other than its head, becomes the snapshot the box's next one is
// taken from, without a restore. Nothing in the box changes, so it posts
// at once, with no dialog.
func headItems(b *snapshots.Box, sn *snapshots.Snapshot, base string) []menuItem {
	if sn.State != snapshots.StateReady || b.ReleasedAt != nil || b.HeadID != nil && *b.HeadID == sn.ID {
		return nil
	}
	return []menuItem{{Text: "Set as head", Label: fmt.Sprintf("Set as head: %s, of %s", sn.Name, b.Name), Href: base + "/head", Post: true}}
}

// setHead is a row's "Set as head". It is a function of its own, not a
// method of Server, which holds enough handlers.
func setHead(s *Server, w http.ResponseWriter, r *http.Request) {
	box, id := chi.URLParam(r, "box"), chi.URLParam(r, "id")
	sn, err := s.opts.Heads.ChooseHead(r.Context(), snapshots.Owner(), box, id)
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.done(w, r, backOf(r, box), heads.HeadSetWords(sn.Name, sn.BoxName))
}

// headChosen says whether the box's head, head, was chosen without a
// restore after its newest take or restore (evs, its log newest first):
// then its files need not be the head's. An automatic take, which logs
// nothing, moves the head on, so the choice must still name the head.
func headChosen(evs []snapshots.LogEvent, head string) bool {
	for _, ev := range evs {
		switch ev.Kind {
		case heads.EvHeadSet:
			return ev.SnapshotID != nil && *ev.SnapshotID == head
		case snapshots.EvSnapshotTaken, snapshots.EvRestored:
			return false
		}
	}
	return false
}
