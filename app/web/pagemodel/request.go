package pagemodel

import "context"

// Request is what a builder reads of the request it answers: its context,
// a form's or the query's values, and where its dialog returns. The web's
// handlers pass their *http.Request wrapped, so no builder needs net/http.
type Request interface {
	Context() context.Context
	FormValue(key string) string
	// Back is where a dialog about the named box returns: a path on this
	// site, or the box's page.
	Back(box string) string
}

// backOf is where a dialog returns, as the request says.
func backOf(r Request, box string) string { return r.Back(box) }
