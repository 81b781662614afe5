package snapshots_test

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestBoxStatesAreTheDatabases: the core's box states are the states the
// boxes table allows, no more and no fewer, and a box reads back as one.
func TestBoxStatesAreTheDatabases(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{})
	ctx := context.Background()
	var def string
	if err := e.Pool.QueryRow(ctx, `SELECT pg_get_constraintdef(oid) FROM pg_constraint
		WHERE conrelid = 'boxes'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%state%'`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	var allowed []string
	for _, m := range regexp.MustCompile(`'([a-z]+)'`).FindAllStringSubmatch(def, -1) {
		allowed = append(allowed, m[1])
	}
	ours := []string{string(snapshots.BoxMaking), string(snapshots.BoxReady), string(snapshots.BoxReleasing), string(snapshots.BoxReleased), string(snapshots.BoxTrashed)}
	slices.Sort(allowed)
	slices.Sort(ours)
	if !slices.Equal(allowed, ours) {
		t.Fatalf("the boxes table allows %v; the core has %v", allowed, ours)
	}
	b := e.Box(t, snapshots.Owner(), "amber-fox")
	if b.State != snapshots.BoxReady {
		t.Fatalf("a new box is %q, want %q", b.State, snapshots.BoxReady)
	}
}
