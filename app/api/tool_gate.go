package api

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
)

// toolGate runs an agent's tool call: while a restore of a box its thread
// works on waits for the person's word or runs, the call answers try_again
// in words (the box holds its turns while it waits); otherwise the tool
// answers, with the answers to the thread's requests it has not been told
// yet (declined, expired, approved) under "requests".
func (s *server) toolGate(t toolDef, w http.ResponseWriter, r *http.Request) {
	c := caller(r)
	if c.Kind != snapshots.CallerAgent {
		s.retried(t, w, r)
		return
	}
	// What authenticate read with the token: the turn's hold, and whether
	// there is news to tell (read only then).
	call, _ := r.Context().Value(agentCallKey{}).(*approvals.AgentCall)
	if call == nil || call.Thread != c.Thread {
		call = &approvals.AgentCall{Thread: c.Thread, Held: s.approvals.TurnHeld(r.Context(), c.Thread), News: true}
	}
	// A held thread may still poll: box_operation reads its own
	// operations and requests, and answers when the hold ends.
	if call.Held != "" && t.Name != "box_operation" {
		s.fail(w, r, &snapshots.Refusal{Code: snapshots.CodeBusy, Words: call.Held, TryAgain: true})
		return
	}
	var news []string
	if call.News {
		news = s.approvals.News(r.Context(), c.Thread)
	}
	if len(news) == 0 {
		s.retried(t, w, r)
		return
	}
	rec := &bufferedWriter{header: w.Header()}
	s.retried(t, rec, r)
	body := rec.body.Bytes()
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) == nil {
		obj["requests"], _ = json.Marshal(news)
		if b, err := json.Marshal(obj); err == nil {
			body = append(b, '\n')
		}
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	w.WriteHeader(rec.status)
	_, _ = w.Write(body)
}

// bufferedWriter keeps a tool's answer so toolGate can add to it.
type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }

func (b *bufferedWriter) WriteHeader(status int) { b.status = status }

func (b *bufferedWriter) Write(p []byte) (int, error) { return b.body.Write(p) }
