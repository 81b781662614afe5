package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/boxsnap/boxsnap/app/logging"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/app/wire"
)

// retried runs a tool that changes something under its retry key, the
// request argument: a call whose key already answered, with the same
// arguments, answers that first answer again without doing anything, after
// a restart too (the answer is kept in PostgreSQL); with other arguments,
// or from another tool, it is refused with request_reused. Only an answer
// that says what was done (200 or 201) or the request for the person's
// word it made (202, an AskedAnswer: a retry never asks twice) is kept:
// after a refusal or a "still running", the key is free, so a retry does
// the work. A call without a key, and a read, runs as it is.
func (s *server) retried(t toolDef, w http.ResponseWriter, r *http.Request) {
	if t.Hints.ReadOnly {
		t.handle(s, w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
	if err != nil {
		t.handle(s, w, r)
		return
	}
	request, args, ok := canonicalArgs(t, body)
	if !ok || request == "" || checkRequest(request) != nil {
		// The tool refuses what cannot be read, in its own words.
		t.handle(s, w, r)
		return
	}
	ctx, c := r.Context(), caller(r)
	digest, resolved := digestOf(t.Name, args), s.resolvedDigest(ctx, c, t.Name, args)
	kept, err := s.Core.KeptToolAnswer(ctx, c, request)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if kept != nil {
		if kept.Tool != t.Name || (kept.Args != digest && (resolved == "" || kept.Resolved != resolved)) {
			s.fail(w, r, &snapshots.Refusal{Code: snapshots.CodeRequestReused, Words: requestReusedWords(request, kept.Tool, kept.Tool == t.Name)})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(kept.Status)
		_, _ = w.Write(kept.Body)
		return
	}
	rec := &bufferedWriter{header: w.Header()}
	t.handle(s, rec, r)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	if rec.status == http.StatusOK || rec.status == http.StatusCreated || asked(rec.status, rec.body.Bytes()) {
		a := snapshots.ToolAnswer{Tool: t.Name, Args: digest, Resolved: resolved, Status: rec.status, Body: rec.body.Bytes()}
		if err := s.Core.KeepToolAnswer(context.WithoutCancel(ctx), c, request, a); err != nil {
			// The call did its work; only a retry of it would do it again.
			logging.From(ctx, s.logger).Error("api: keep a tool answer", "tool", t.Name, "err", err)
		}
	}
	w.WriteHeader(rec.status)
	_, _ = w.Write(rec.body.Bytes())
}

// asked reports whether an answer is a request for the person's word
// that the call made (fail's AskedAnswer).
func asked(status int, body []byte) bool {
	var a wire.AskedAnswer
	return status == http.StatusAccepted && json.Unmarshal(body, &a) == nil && snapshots.ValidID(approvals.PrefixApproval, a.Request)
}

// errReader answers err once the body read before it is spent, so the tool
// reads the body as it came, its error too (a body over the cap).
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}

// canonicalArgs reads a call's arguments as the tool reads them, so a field
// left out and the same field sent empty are the same call: its request,
// and the rest as a map. ok is false when the tool would refuse the body.
func canonicalArgs(t toolDef, body []byte) (request string, args map[string]any, ok bool) {
	v := reflect.New(reflect.TypeOf(t.Params))
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v.Interface()); err != nil {
		return "", nil, false
	}
	raw, err := json.Marshal(v.Interface())
	if err != nil {
		return "", nil, false
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return "", nil, false
	}
	request, _ = args["request"].(string)
	delete(args, "request")
	return request, args, true
}

// digestOf is a digest of a tool's name and arguments (a map, so its keys
// are in order).
func digestOf(tool string, args map[string]any) string {
	raw, _ := json.Marshal(args)
	sum := sha256.Sum256(append([]byte(tool+"\n"), raw...))
	return hex.EncodeToString(sum[:])
}

// resolvedDigest is the digest of args with their box and snapshot named by
// their IDs, when the caller can see them; "" otherwise.
func (s *server) resolvedDigest(ctx context.Context, c snapshots.Caller, tool string, args map[string]any) string {
	box, _ := args["box"].(string)
	ref, _ := args["snapshot"].(string)
	if strings.TrimSpace(box) == "" || strings.TrimSpace(ref) == "" || checkBoxAndSnapshot(box, ref) != nil {
		return ""
	}
	sn, b, err := s.Core.SnapshotOfBox(ctx, c, box, ref)
	if err != nil {
		return ""
	}
	named := make(map[string]any, len(args))
	for k, v := range args {
		named[k] = v
	}
	named["box"], named["snapshot"] = b.ID, sn.ID
	return digestOf(tool, named)
}
