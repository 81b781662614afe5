package web

import (
	"context"
	"net/http"
)

// oneRead draws a page from one read of the records: every record read
// the handler makes (its rows, its counts, the tabs' counts, the requests
// beside Requests) sees the rows of one moment, so no two parts of the
// page, or of a region drawn again when the page follows a change,
// disagree.
func (s *Server) oneRead(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		began := false
		err := s.opts.Core.ReadOnce(r.Context(), func(ctx context.Context) error {
			began = true
			h(w, r.WithContext(ctx))
			return nil
		})
		switch {
		case err != nil && !began:
			s.fail(w, r, err)
		case err != nil:
			// The page is sent; a read-only transaction that cannot end
			// changed nothing.
			s.logger(r).Warn("end a page's one read", "err", err)
		}
	}
}
