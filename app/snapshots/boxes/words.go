package boxes

import (
	"fmt"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

func wordsReleaseCouldNotStop(box string, err error) string {
	return fmt.Sprintf(snapshots.ReleaseUnfinished+"boxsnap could not stop %s: %v", box, err)
}

// Starting a stopped box, from its card.
const wordsOnlyPersonStarts = "Only the person starts a box from its card."

func wordsStartReleased(box string) string {
	return fmt.Sprintf("%s is released: there is nothing to start.", box)
}

func wordsStartBusy(box string) string {
	return fmt.Sprintf("%s is busy with an operation: start it once that ends.", box)
}

func wordsNothingToRun(box string) string {
	return fmt.Sprintf("%s has nothing to run: its backend started no process, so it stays stopped.", box)
}

func wordsRunningAlready(box string) string { return fmt.Sprintf("%s is running already.", box) }
