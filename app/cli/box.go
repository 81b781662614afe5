package cli

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"

	"github.com/boxsnap/boxsnap/app/wire"
)

// BoxUsage is `boxsnap box`'s help.
const BoxUsage = `boxsnap box: the owner's boxes, through a running boxsnap server.

Usage:
  boxsnap box release <box> [--delete-kept] [--dry-run]
  boxsnap box trash
  boxsnap box trash-restore <box>
  boxsnap box trash-empty <box> [--dry-run]
  boxsnap box reset <box> [--keep-logins] [--template <name>] [--force] [--dry-run]
  boxsnap box undo <box> [--force] [--dry-run]
  boxsnap box move <box> <host>
  boxsnap box hosts
  boxsnap box host-gone <host>
  boxsnap box takeover <host>

release gives the box up. While Settings keeps a trash (72 hours unless
changed), boxsnap takes a final snapshot where the backend can and moves
the box to the trash, stopped, with its snapshots: trash lists it,
trash-restore gives it back with its history, and trash-empty releases it
now, as the trash does by itself when its time ends. Then its snapshots
that nobody kept go with it, and each kept one is first copied where the
backend keeps it past the release (a held copy on Proxmox). When a copy
cannot be made the release stops, says why and deletes nothing; run it
again, or with --delete-kept to release the box and delete its kept
snapshots too. With --dry-run, release and trash-empty say what goes,
what stays and where it goes first, and change nothing.

reset makes the box fresh from its template, taking an undo first; with
--keep-logins it carries over the login files of Claude Code, Codex,
opencode and the GitHub CLI (and Settings' own), skipping a file over
1 MiB, and undoes itself if one cannot be written back. Reset works on
boxes in this host's folders. undo restores the box to its newest undo,
of a reset or a restore.

move puts a box whose data is on one host (a local box) on the server's
host, made there and restored from its newest snapshot: point --server
at the host the box goes to. It needs the box's snapshots reachable from
that host (a content store). hosts lists the hosts, when each was last
seen and how many boxes it owns. host-gone marks a host gone for good,
once it has not been seen for two minutes, and takeover then carries its
boxes to the server's host, each from its newest snapshot, saying which
it left and why.

Every command takes --server <address> (or BOXSNAP_SERVER; default
http://127.0.0.1:8080) and your personal API token, as boxsnap snapshot
does.
`

func boxCommands() map[string]command {
	return map[string]command{
		"release":       {usage: "boxsnap box release <box> [--delete-kept] [--dry-run]", args: "a box", min: 1, max: 1, flags: releaseFlags, run: release},
		"trash":         {usage: "boxsnap box trash", args: "nothing", min: 0, max: 0, flags: noFlags, run: trashList},
		"trash-restore": {usage: "boxsnap box trash-restore <box>", args: "a box", min: 1, max: 1, flags: noFlags, run: trashRestore},
		"trash-empty":   {usage: "boxsnap box trash-empty <box> [--dry-run]", args: "a box", min: 1, max: 1, flags: deleteFlags, run: trashEmpty},
		"reset":         {usage: "boxsnap box reset <box> [--keep-logins] [--template <name>] [--force] [--dry-run]", args: "a box", min: 1, max: 1, flags: resetFlags, run: reset},
		"undo":          {usage: "boxsnap box undo <box> [--force] [--dry-run]", args: "a box", min: 1, max: 1, flags: undoFlags, run: undo},
		"move":          {usage: "boxsnap box move <box> <host>", args: "a box and a host", min: 2, max: 2, flags: noFlags, run: move},
		"hosts":         {usage: "boxsnap box hosts", args: "nothing", min: 0, max: 0, flags: noFlags, run: hostList},
		"host-gone":     {usage: "boxsnap box host-gone <host>", args: "a host", min: 1, max: 1, flags: noFlags, run: hostGone},
		"takeover":      {usage: "boxsnap box takeover <host>", args: "a gone host", min: 1, max: 1, flags: noFlags, run: takeover},
	}
}

type releaseOpts struct{ deleteKept, dryRun *bool }

func releaseFlags(fs *flag.FlagSet) any {
	return &releaseOpts{deleteKept: fs.Bool("delete-kept", false, "delete its kept snapshots too (Release and delete it)"),
		dryRun: fs.Bool("dry-run", false, dryRunUsage)}
}

// release is `box release`: the API's release, waited for. A release that
// stopped at a kept snapshot's copy answers its words, and what to run next.
func release(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*releaseOpts)
	path := "/boxes/" + seg(pos[0]) + "/release?wait=true"
	if *opts.deleteKept {
		path += "&deleteKept=true"
	}
	if *opts.dryRun {
		return printDry(ctx, c, "POST", strings.Replace(path, "wait=true", "dry_run=true", 1), nil, out)
	}
	var ans wire.OperationAnswer
	if err := c.do(ctx, "POST", path, nil, &ans); err != nil {
		var r *refusal
		if !*opts.deleteKept && errors.As(err, &r) && strings.Contains(r.words, "Release did not finish") {
			r.words += "\nRun it again, or with --delete-kept to release " + pos[0] + " and delete its kept snapshots."
		}
		return err
	}
	return printOperation(out, ans)
}
