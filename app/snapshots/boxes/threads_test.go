package boxes_test

import (
	"context"
	"maps"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestThreadTitlesOfAnotherThreadUnseen: the titles a page's rows name are
// read by ID; the person reads any thread's, an agent only its own thread's,
// and a made-up ID reads as nothing.
func TestThreadTitlesOfAnotherThreadUnseen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{NoWorkers: true})
	mine, agent, _ := e.Thread(t, "mine")
	other, _, _ := e.Thread(t, "other")
	ids := []string{mine.ID, other.ID, "th_made_up"}
	got, err := e.Boxes.ThreadTitles(ctx, snapshots.Owner(), ids)
	if want := map[string]string{mine.ID: "mine", other.ID: "other"}; err != nil || !maps.Equal(got, want) {
		t.Errorf("the person reads %v (%v), want %v", got, err, want)
	}
	got, err = e.Boxes.ThreadTitles(ctx, agent, ids)
	if want := map[string]string{mine.ID: "mine"}; err != nil || !maps.Equal(got, want) {
		t.Errorf("an agent reads %v (%v), want only its own thread's %v", got, err, want)
	}
}
