package local

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// TestHeldBoxesListsCopiesQuietSince: the boxes this folder holds are
// listed once their state has stayed unchanged since the time asked, and
// a box released here is no longer listed.
func TestHeldBoxesListsCopiesQuietSince(t *testing.T) {
	ctx := context.Background()
	b := ownerBackend(t, t.TempDir(), "w1")
	for _, id := range []string{"box-one", "box-two"} {
		if _, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: id, Name: id, Kind: "folder"}}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := b.HeldBoxes(ctx, time.Now().Add(-time.Hour)); err != nil || len(got) != 0 {
		t.Fatalf("boxes made just now listed as quiet for an hour: %q %v", got, err)
	}
	later := time.Now().Add(time.Second)
	if got, err := b.HeldBoxes(ctx, later); err != nil || !slices.Equal(got, []string{"box-one", "box-two"}) {
		t.Fatalf("HeldBoxes: %q %v", got, err)
	}
	if err := b.Release(ctx, b.guestOf("box-one", "folder")); err != nil {
		t.Fatal(err)
	}
	if got, err := b.HeldBoxes(ctx, later); err != nil || !slices.Equal(got, []string{"box-two"}) {
		t.Fatalf("HeldBoxes after box-one's release: %q %v", got, err)
	}
}
