package api_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestRetryKeyWithinItsTimeAnswersTheFirst: a tool call's retry key
// answers the first call's answer, byte for byte, after housekeeping has
// run within the time keys are kept; once the key is older than that,
// housekeeping forgets it and a retry does the work again.
func TestRetryKeyWithinItsTimeAnswersTheFirst(t *testing.T) {
	t.Parallel()
	e := setup(t)
	token, agent := e.agent(t, "Retry a take")
	e.Box(t, agent, "amber-fox")
	call := map[string]any{"box": "amber-fox", "name": "before the fix", "request": "take-1"}
	first := e.call(t, "POST", "/tools/box_snapshot", token, call).must(t, 200)

	if _, err := e.Sweeps.Housekeep(t.Context()); err != nil {
		t.Fatal(err)
	}
	again := e.call(t, "POST", "/tools/box_snapshot", token, call).must(t, 200)
	if !bytes.Equal(again.Raw, first.Raw) {
		t.Fatalf("a retry within %s answered %s, the first call %s", snapshots.ToolAnswersKeptFor, again.Raw, first.Raw)
	}
	if names := e.snapshotNames(t, "amber-fox"); len(names) != 1 {
		t.Fatalf("a retry took again: %q", names)
	}

	// A week and an hour later, as the wait would leave the key.
	old := (snapshots.ToolAnswersKeptFor + time.Hour).String()
	if _, err := e.Pool.Exec(t.Context(), `UPDATE tool_answers SET created_at = now() - $1::interval`, old); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Pool.Exec(t.Context(), `UPDATE operations SET ended_at = now() - $1::interval WHERE ended_at IS NOT NULL`, old); err != nil {
		t.Fatal(err)
	}
	rep, err := e.Sweeps.Housekeep(t.Context())
	if err != nil || rep.ToolAnswers != 1 || rep.RequestKeys < 1 {
		t.Fatalf("housekeeping forgot %+v (%v), want the key's answer and its operation's key", rep, err)
	}
	later := e.call(t, "POST", "/tools/box_snapshot", token, call).must(t, 200)
	if later.str("snapshot") == first.str("snapshot") {
		t.Fatalf("a retry of a forgotten key answered the first call: %s", later.Raw)
	}
}
