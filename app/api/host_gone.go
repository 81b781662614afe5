package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/wire"
)

// goneHost marks a host gone for good, the person's word.
func goneHost(s hostRoutes, w http.ResponseWriter, r *http.Request) {
	err := checkRef("host", param(r, "host"))
	var h wire.HostAnswer
	if err == nil {
		h, err = s.hosts.MarkGone(r.Context(), caller(r), param(r, "host"))
	}
	s.answer(w, r, h, err)
}
