package jobs

import (
	"context"
	"time"
)

// ContentSweepInterval is how often the content store's sweep frees the
// objects nothing names by default (BOXSNAP_CONTENT_SWEEP_INTERVAL): often enough that a deleted snapshot's room comes
// back within the hour, rarely enough that it costs nothing.
const ContentSweepInterval = 10 * time.Minute

// contentSweeps is the content store's sweep, when there is a content
// store.
func contentSweeps(d Deps) []sweep {
	if d.ContentSweep == nil {
		return nil
	}
	return []sweep{{name: "content-store", every: d.Intervals.orDefaults().ContentSweep, run: func(ctx context.Context, d Deps) error {
		n, err := d.ContentSweep(ctx)
		if n > 0 {
			d.Logger.Info("the content store's sweep freed objects no snapshot names", "count", n)
		}
		return err
	}}}
}
