package web

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

// showBulkDialog answers the Select bar's Keep… and Delete….
func (s *Server) showBulkDialog(w http.ResponseWriter, r *http.Request) {
	d, _, err := s.dialogs.BulkDialog(asked{r}, r.URL.Query().Get("action"), r.URL.Query()["id"])
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.renderDialog(w, r, http.StatusOK, d)
}

// bulkSnapshots keeps or deletes each selected snapshot; the core checks
// each again at the moment of the change and refuses what it must, which
// the flash names.
func (s *Server) bulkSnapshots(w http.ResponseWriter, r *http.Request) {
	act := r.PostFormValue("action")
	d, items, err := s.dialogs.BulkDialog(asked{r}, act, r.PostForm["id"])
	if err != nil {
		s.refused(w, r, err)
		return
	}
	if r.PostFormValue("plan") != d.Fingerprint {
		d.Error = pagemodel.StaleWords
		s.renderDialog(w, r, http.StatusConflict, d)
		return
	}
	var skipped []string
	n := 0
	for _, it := range items {
		var err error
		switch act {
		case "delete":
			_, err = s.opts.Keeps.Delete(r.Context(), snapshots.Owner(), snapshots.DeleteRequest{Box: it.Box.ID, Snapshot: it.Sn.ID})
		case "renew":
			_, err = s.opts.Keeps.Renew(r.Context(), snapshots.Owner(), snapshots.KeepRequest{Box: it.Box.ID, Snapshot: it.Sn.ID})
		default:
			_, err = s.opts.Keeps.Keep(r.Context(), snapshots.Owner(), snapshots.KeepRequest{Box: it.Box.ID, Snapshot: it.Sn.ID})
		}
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("‘%s’: %s", it.Sn.Name, pagemodel.RefusalWords(err)))
			continue
		}
		n++
	}
	verb := map[string]string{"keep": "Keeping", "delete": "Deleting", "renew": "Keeping longer"}[act]
	msg := fmt.Sprintf("%s %s.", verb, pagemodel.Plural(n, "snapshot", "snapshots"))
	if all := append(d.Skipped, skipped...); len(all) > 0 {
		msg += " Skipped " + strings.Join(all, " ")
	}
	s.done(w, r, d.Back, msg)
}
