package fork_test

import (
	"context"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"os"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// refusedWith fails unless err is a refusal saying each of words.
func refusedWith(t *testing.T, err error, words ...string) {
	t.Helper()
	r, ok := snapshots.AsRefusal(err)
	if !ok {
		t.Fatalf("want a refusal saying %q, got %v", words, err)
	}
	for _, w := range words {
		if !strings.Contains(r.Words, w) {
			t.Fatalf("refusal %q does not say %q", r.Words, w)
		}
	}
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// take takes a snapshot and waits for it to be ready.
func take(t *testing.T, e *coretest.Env, c snapshots.Caller, box, name string) *snapshots.Snapshot {
	t.Helper()
	op, sn, err := e.Take.Take(context.Background(), c, taking.TakeRequest{Box: box, Name: name})
	if err != nil {
		t.Fatalf("take %s: %v", name, err)
	}
	if got := e.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("take %s ended %s: %s", name, got.State, deref(got.Error))
	}
	sn, _, err = e.Core.Snapshot(context.Background(), snapshots.Owner(), sn.ID)
	if err != nil {
		t.Fatal(err)
	}
	return sn
}
