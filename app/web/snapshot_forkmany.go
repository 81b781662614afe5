package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

// forkCount reads the Fork dialog's Boxes: empty is one; many says it asks
// for more than one. A count that is not a whole number from 1 to most is
// refused in words.
func forkCount(v string, most int) (count int, many bool, err error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 1, false, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > most {
		return 0, false, &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: forkCountWords(most)}
	}
	return n, n > 1, nil
}

// forkCountWords refuses a Boxes field out of its range.
func forkCountWords(most int) string {
	return "Boxes is a whole number from 1 to " + strconv.Itoa(most) + "."
}

// forkManyPost is Fork with Boxes over one, in a type of its own so the
// Server's type does not grow.
type forkManyPost struct{ *Server }

// post forks the snapshot into count boxes in one go, all from the
// snapshot, and opens the Machines tab, where each new box shows starting;
// a refusal (of the count, of any name) makes none and shows the dialog
// again with why.
func (s forkManyPost) post(w http.ResponseWriter, r *http.Request, d pagemodel.Dialog, box, id, name string, count int, bad error) {
	err := bad
	if err == nil {
		_, err = s.opts.Forks.ForkMany(r.Context(), snapshots.Owner(), fork.ForkManyRequest{Box: box, Snapshot: id, Name: name, Count: count,
			AsMachine: r.PostFormValue("where") == pagemodel.WhereMachine, RequestID: r.PostFormValue("request")})
	}
	if err != nil {
		d.Error, d.Name = pagemodel.RefusalWords(err), name
		if c, cerr := strconv.Atoi(strings.TrimSpace(r.PostFormValue("count"))); cerr == nil {
			d.Count = c
		}
		s.renderDialog(w, r, statusOf(err), d)
		return
	}
	next := "/boxes"
	if r.Header.Get("HX-Request") == "true" {
		w.Header().Set("HX-Redirect", next)
		w.WriteHeader(http.StatusOK)
		return
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}
