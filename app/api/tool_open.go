package api

import (
	"context"
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// toolOpening is what a changing tool's call names that every such tool
// checks alike, read from its decoded arguments.
type toolOpening struct {
	// refs is the check of what the call names (its box, its snapshot,
	// its template), in the order the tool checks them; nil when it names
	// nothing to check.
	refs error
	// request is the call's retry key, checked after refs.
	request string
	// dryRun asks plan's plan instead of the call: the plan the real call
	// would carry out, after every check it runs, changing nothing.
	dryRun bool
	plan   func(context.Context, snapshots.Caller) (any, error)
}

// openTool is the opening every changing tool shares: its call decoded
// into P (takes says what the tool takes, for a refusal's words), what
// open reads of it checked (the references, then the request ID), and a
// dry run answered with its plan. It answers the call itself, a refusal
// or a plan, and then reports false; true means the tool goes on with p.
func openTool[P any](s failer, w http.ResponseWriter, r *http.Request, takes string, open func(*P) toolOpening) (p P, ok bool) {
	if err := decode(r, &p, takes); err != nil {
		s.fail(w, r, err)
		return p, false
	}
	o := open(&p)
	err := o.refs
	if err == nil {
		err = checkRequest(o.request)
	}
	if err != nil {
		s.fail(w, r, err)
		return p, false
	}
	if o.dryRun {
		plan, err := o.plan(r.Context(), caller(r))
		s.answer(w, r, plan, err)
		return p, false
	}
	return p, true
}

// MaxRequestID bounds a request ID an agent makes.
const MaxRequestID = 100

// checkRequest refuses a request ID that is too long or not text.
func checkRequest(id string) error {
	if len(id) > MaxRequestID || !isText(id) {
		return invalid("request is an ID you make, at most %d characters of text.", MaxRequestID)
	}
	return nil
}
