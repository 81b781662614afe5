package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/boxsnap/boxsnap/app/wire"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

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
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	if a, ok := approvals.AsAsked(err); ok {
		// Not a refusal: the agent asked the person.
		writeJSON(w, http.StatusAccepted, askedAnswer{Message: a.Words + " " + pollWords(a.Approval.ID), Request: a.Approval.ID, State: a.Approval.State})
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

// decode reads a JSON object from the body into v: at most MaxBodyBytes,
// no unknown fields, one value only. Its refusals say what is wrong in
// words, naming what the endpoint takes.
func decode(r *http.Request, v any, takes string) error {
	body, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &badRequest{code: codeTooLarge,
			words: fmt.Sprintf("The request's body is over %d KiB.", MaxBodyBytes>>10)}
	}
	if err != nil {
		return invalid("boxsnap could not read the request's body.")
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return invalid("%s", emptyBodyWords(takes))
	}
	if strings.Contains(strings.ToLower(string(body)), `\u0000`) {
		return invalid("Text in a request cannot hold a NUL character.")
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err, takes)
	}
	if dec.More() {
		return invalid("The request's body holds more than one JSON value: send one object with %s.", takes)
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid("The request's body holds more than one JSON value: send one object with %s.", takes)
	}
	return nil
}

func decodeError(err error, takes string) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return invalid("The request's body is not valid JSON: send one object with %s.", takes)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return invalid("The request's body must be a JSON object with %s, not %s.", takes, article(typ.Value))
		}
		return invalid("%s must be %s, not %s.", typ.Field, typeWords(typ.Type.Kind().String()), article(typ.Value))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return invalid("This takes %s: it does not know the field %s.", takes, field)
	}
	return invalid("The request's body is not valid JSON: send one object with %s.", takes)
}

func typeWords(kind string) string {
	switch kind {
	case "bool":
		return "true or false"
	case "string":
		return "text"
	case "int", "int64", "int32", "float64", "uint", "uint64":
		return "a number"
	case "slice":
		return "a list"
	case "struct", "map", "ptr":
		return "an object"
	}
	return "of another type"
}

func article(jsonType string) string {
	switch jsonType {
	case "object", "array":
		return "an " + jsonType
	case "number", "string", "bool":
		return "a " + jsonType
	}
	if strings.HasPrefix(jsonType, "number") {
		return "a number that does not fit"
	}
	return jsonType
}

func emptyBodyWords(takes string) string {
	return fmt.Sprintf("The request's body is empty: send a JSON object with %s.", takes)
}

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
// (the picture apart). The body is capped at MaxBodyBytes.
func jsonOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/import") {
			// An import is export files, not JSON, under its own cap.
			r.Body = http.MaxBytesReader(w, r.Body, MaxImportBytes)
			next.ServeHTTP(w, r)
			return
		}
		if ct := r.Header.Get("Content-Type"); ct != "" && r.ContentLength != 0 {
			if mt, _, err := mime.ParseMediaType(ct); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
				writeError(w, codeUnsupportedMediaType, "Send JSON, with Content-Type: application/json.", false)
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// cleanParams refuses a path or query that is not text: invalid UTF-8 or
// control characters name nothing, and the database refuses a NUL.
func cleanParams(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bad := !isText(r.URL.Path)
		for k, vs := range r.URL.Query() {
			bad = bad || !isText(k)
			for _, v := range vs {
				bad = bad || !isText(v)
			}
		}
		if bad {
			writeError(w, snapshots.CodeInvalid, "The request's path or query holds something that is not text.", false)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func isText(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0
}

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
