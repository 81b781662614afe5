package web

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// watchCookie holds the restores the person started from a dialog, until
// each has said how it ended: a toast says it once, only when the person
// is not on the box's page. It holds operation IDs only, so
// the page's script may see that there is something to wait for.
const watchCookie = "boxsnap_watch"

// maxWatched bounds the cookie.
const maxWatched = 8

var opIDPattern = regexp.MustCompile(`^[a-z0-9]{4,40}$`)

func watched(r *http.Request) []string {
	c, err := r.Cookie(watchCookie)
	if err != nil {
		return nil
	}
	var out []string
	for _, id := range strings.Split(c.Value, ".") {
		if opIDPattern.MatchString(id) {
			out = append(out, id)
		}
	}
	return out
}

func (s *Server) setWatched(w http.ResponseWriter, ids []string) {
	if len(ids) > maxWatched {
		ids = ids[len(ids)-maxWatched:]
	}
	c := &http.Cookie{Name: watchCookie, Value: strings.Join(ids, "."), Path: "/", Secure: s.opts.SecureCookies,
		SameSite: http.SameSiteLaxMode, MaxAge: 24 * 3600}
	if len(ids) == 0 {
		c.MaxAge = -1
	}
	http.SetCookie(w, c)
}

// watch adds a restore the person started to the watched ones.
func (s *Server) watch(w http.ResponseWriter, r *http.Request, op string) {
	s.setWatched(w, append(watched(r), op))
}

// toast is one toast's words.
type toast struct {
	Words string
	Href  string
}

// showToasts answers the page's script, which asks while restores are
// watched: a toast for each that ended, unless the person is on its box's
// page (?here=), where the notice says it. Each says so once.
func (s *Server) showToasts(w http.ResponseWriter, r *http.Request) {
	here := r.URL.Query().Get("here")
	ctx := r.Context()
	var keep []string
	var out []toast
	for _, id := range watched(r) {
		op, err := s.opts.Core.Operation(ctx, snapshots.Owner(), id)
		if err != nil || op.BoxID == nil {
			continue
		}
		if op.State == snapshots.OpRunning {
			keep = append(keep, id)
			continue
		}
		b, err := s.opts.Core.Box(ctx, snapshots.Owner(), *op.BoxID)
		if err != nil {
			continue
		}
		page := "/boxes/" + url.PathEscape(b.Name)
		if here == page {
			continue // the box's page says it in its notice
		}
		// A restore that did not end done has no result: its words below
		// name no target.
		res, _ := s.opts.Restores.Kinds().Restore.Result(op)
		switch op.State {
		case snapshots.OpDone:
			out = append(out, toast{Words: fmt.Sprintf("%s was restored to ‘%s’.", b.Name, res.TargetName), Href: page})
		case snapshots.OpUnknown:
			out = append(out, toast{Words: fmt.Sprintf("boxsnap could not confirm the restore of %s.", b.Name), Href: page})
		default:
			why := ""
			if op.Error != nil {
				why = *op.Error
			}
			out = append(out, toast{Words: snapshots.UnfinishedWords("The restore of "+b.Name, why, ""), Href: page})
		}
	}
	s.setWatched(w, keep)
	w.Header().Set("Cache-Control", "no-store")
	s.renderBlock(w, http.StatusOK, "box", "toasts", out)
}
