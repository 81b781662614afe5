package cli

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"
)

// BoxUsage is `boxsnap box`'s help.
const BoxUsage = `boxsnap box: the owner's boxes, through a running boxsnap server.

Usage:
  boxsnap box release <box> [--delete-kept]

release gives the box up: its snapshots that nobody kept go with it, and
each kept one is first copied where the backend keeps it past the release
(a held copy on Proxmox). When a copy cannot be made the release stops,
says why and deletes nothing; run it again, or with --delete-kept to
release the box and delete its kept snapshots too.

Every command takes --server <address> (or BOXSNAP_SERVER; default
http://127.0.0.1:8080) and your personal API token, as boxsnap snapshot
does.
`

func boxCommands() map[string]command {
	return map[string]command{
		"release": {usage: "boxsnap box release <box> [--delete-kept]", args: "a box", min: 1, max: 1, flags: releaseFlags, run: release},
	}
}

type releaseOpts struct{ deleteKept *bool }

func releaseFlags(fs *flag.FlagSet) any {
	return &releaseOpts{deleteKept: fs.Bool("delete-kept", false, "delete its kept snapshots too (Release and delete it)")}
}

// release is `box release`: the API's release, waited for. A release that
// stopped at a kept snapshot's copy answers its words, and what to run next.
func release(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*releaseOpts)
	path := "/boxes/" + seg(pos[0]) + "/release?wait=true"
	if *opts.deleteKept {
		path += "&deleteKept=true"
	}
	var ans operationAnswer
	if err := c.do(ctx, "POST", path, nil, &ans); err != nil {
		var r *refusal
		if !*opts.deleteKept && errors.As(err, &r) && strings.Contains(r.words, "Release did not finish") {
			r.words += "\nRun it again, or with --delete-kept to release " + pos[0] + " and delete its kept snapshots."
		}
		return err
	}
	return printOperation(out, ans)
}
