package web

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestEventsSayWhichBoxChanged: the event stream an open page follows says
// a box's ID when its operation ends and when a non-operation change (a
// rename) is made, narrowed to the boxes asked for; a bad box ID is
// refused in words.
func TestEventsSayWhichBoxChanged(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	ctx := context.Background()
	calm := s.env.Box(t, snapshots.Owner(), "calm-moss")
	other := s.env.Box(t, snapshots.Owner(), "grey-ridge")
	if w := s.do(t, "GET", "/events?box=not-an-id", nil, nil); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "A box's ID") {
		t.Fatalf("a bad box ID: %d %q, want a refusal in words", w.Code, w.Body.String())
	}
	srv := httptest.NewServer(s.h)
	t.Cleanup(srv.Close)
	// The stream is the signed-in owner's: without a session (a thread's
	// bearer token is no session) it streams nothing.
	for _, h := range []map[string]string{nil, {"Authorization": "Bearer bxa_notasession"}} {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/events", nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == http.StatusOK || res.Header.Get("Content-Type") == "text/event-stream" {
			t.Fatalf("GET /events with no session (%v): %s %s", h, res.Status, res.Header.Get("Content-Type"))
		}
	}
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(sctx, "GET", srv.URL+"/events?box="+calm.ID, nil)
	req.AddCookie(&http.Cookie{Name: sessionCookie, Value: s.session})
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET /events: %s %s", res.Status, res.Header.Get("Content-Type"))
	}
	events := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- data
			}
		}
		close(events)
	}()
	next := func(what string) string {
		t.Helper()
		select {
		case id, ok := <-events:
			if !ok {
				t.Fatalf("the stream ended before %s", what)
			}
			return id
		case <-sctx.Done():
			t.Fatalf("no event after %s", what)
		}
		return ""
	}
	// A take on the other box says nothing to this stream; one on calm-moss
	// does, at its admission and at its end.
	takeNamed(t, s, other.Name, "elsewhere")
	sn := takeNamed(t, s, calm.Name, "before my edit")
	if id := next("calm-moss's take"); id != calm.ID {
		t.Fatalf("the stream for calm-moss says %q changed", id)
	}
	for len(events) > 0 {
		<-events
	}
	if _, err := s.env.Keeps.Rename(ctx, snapshots.Owner(), calm.Name, sn.ID, "renamed"); err != nil {
		t.Fatal(err)
	}
	if id := next("a rename"); id != calm.ID {
		t.Fatalf("after a rename the stream says %q changed", id)
	}
}
