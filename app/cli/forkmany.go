package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
)

// forkMany is `snapshot fork --count`: it forks the snapshot into that many
// boxes in one call, waits for them, and prints what was made, then each
// fork on a line of its own. When a fork did not end done, it exits as a
// failure, after the forks that were made are printed.
func forkMany(ctx context.Context, c *client, path string, opts *forkOpts, out io.Writer) error {
	var ans wire.ForkManyAnswer
	body := wire.ForkBody{Name: *opts.name, AsMachine: *opts.asMachine, Count: opts.count}
	if err := c.do(ctx, "POST", path+"?wait=true", body, &ans); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(out, ans.Message); err != nil {
		return err
	}
	notDone := 0
	for _, f := range ans.Forks {
		if _, err := fmt.Fprintf(out, "  %s\t%s\t%s\n", f.Name, f.State, f.Operation); err != nil {
			return err
		}
		if f.State != string(snapshots.OpDone) {
			notDone++
		}
	}
	if notDone > 0 {
		return &refusal{words: fmt.Sprintf("%d of the %d forks did not end done; the others stand.", notDone, len(ans.Forks))}
	}
	return nil
}
