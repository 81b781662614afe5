package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/boxsnap/boxsnap/app/wire"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/api/jsonin"
	"github.com/boxsnap/boxsnap/app/logging"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
)

// MaxBodyBytes caps a request's body: the largest legitimate one, a note of
// 1 KB in a tool call, is far below it.
const MaxBodyBytes = 64 << 10

// MaxRefLength caps a box's or a snapshot's reference (a name or an ID) in a
// request; a snapshot's name is at most 60 characters and a
// box's 40, so a longer one names nothing.
const MaxRefLength = 200

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, codeInternal, "boxsnap could not write its answer.", false)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// writeError answers a code with its status (statusOf) and words.
func writeError(w http.ResponseWriter, code snapshots.Code, words string, tryAgain bool) {
	writeJSON(w, statusOf(code), wire.ErrorBody{Error: wire.APIError{Code: code, Message: words, TryAgain: tryAgain}})
}

// fail answers err: a refusal with its code's status and its words; anything else
// is logged and answered 500 with words that hold no detail (and so no
// secret).
func (s failer) fail(w http.ResponseWriter, r *http.Request, err error) {
	if a, ok := approvals.AsAsked(err); ok {
		// Not a refusal: the agent asked the person. Its state is the one
		// box_operation answers for the request while it waits.
		writeJSON(w, http.StatusAccepted, wire.AskedAnswer{Message: a.Words + " " + pollWords(a.Approval.ID), Request: a.Approval.ID, State: approvals.NeedsInput})
		return
	}
	if ref, ok := snapshots.AsRefusal(err); ok {
		writeError(w, ref.Code, ref.Words, ref.TryAgain)
		return
	}
	var bad *badRequest
	if errors.As(err, &bad) {
		writeError(w, bad.code, bad.words, false)
		return
	}
	logging.From(r.Context(), s.logger).Error("api", "method", r.Method, "path", r.URL.Path, "err", err)
	writeError(w, codeInternal, "boxsnap could not do this: an internal error, which it logged.", true)
}

// badRequest is a request the API refuses before it reaches the core.
type badRequest struct {
	code  snapshots.Code
	words string
}

func (b *badRequest) Error() string { return b.words }

func invalid(format string, args ...any) error {
	return &badRequest{code: snapshots.CodeInvalid, words: fmt.Sprintf(format, args...)}
}

// decode reads a JSON object from the body into v (jsonin.Decode): at
// most MaxBodyBytes, no unknown fields, one value only. Its refusals say
// what is wrong in words, naming what the endpoint takes.
func decode(r *http.Request, v any, takes string) error {
	err := jsonin.Decode(r, v, takes, MaxBodyBytes)
	var ref *jsonin.Refusal
	if errors.As(err, &ref) && ref.TooLarge {
		return &badRequest{code: codeTooLarge, words: ref.Words}
	}
	if errors.As(err, &ref) {
		return invalid("%s", ref.Words)
	}
	return err
}

func emptyBodyWords(takes string) string { return jsonin.EmptyBodyWords(takes) }

// param reads a path parameter, unescaped when the request's path kept its
// escapes (a name with a slash).
func param(r *http.Request, name string) string {
	v := chi.URLParam(r, name)
	if r.URL.RawPath != "" {
		if u, err := url.PathUnescape(v); err == nil {
			v = u
		}
	}
	return v
}

// quote puts a reference between quotes for words, shortened so an answer
// never echoes a huge input.
func quote(s string) string {
	if utf8.RuneCountInString(s) > 80 {
		s = string([]rune(s)[:80]) + "…"
	}
	return "“" + s + "”"
}

// jsonOnly refuses a body that says it is not JSON; every answer is JSON
// (the picture apart). The body is capped at MaxBodyBytes, an import's at
// MaxImportBytes.
var jsonOnly = jsonin.Only(MaxBodyBytes, MaxImportBytes, func(w http.ResponseWriter) {
	writeError(w, codeUnsupportedMediaType, "Send JSON, with Content-Type: application/json.", false)
})

// cleanParams refuses a path or query that is not text.
var cleanParams = jsonin.TextOnly(func(w http.ResponseWriter) {
	writeError(w, snapshots.CodeInvalid, "The request's path or query holds something that is not text.", false)
})

func isText(s string) bool { return jsonin.IsText(s) }

// checkRef refuses a box's or a snapshot's reference that names nothing:
// empty, too long, or not text.
func checkRef(what, ref string) error {
	if strings.TrimSpace(ref) == "" {
		return invalid("%s is required: its name or ID.", what)
	}
	if utf8.RuneCountInString(ref) > MaxRefLength || !isText(ref) {
		return &badRequest{code: snapshots.CodeNotFound,
			words: fmt.Sprintf("No %s %s that you can see.", what, quote(ref))}
	}
	return nil
}
