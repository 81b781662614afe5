package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
)

// The trash and reset: `boxsnap box trash`, `trash-restore`, `trash-empty`,
// `reset` and `undo`.

// trashList is `box trash`: the boxes in the trash, the soonest to go first.
func trashList(ctx context.Context, c *client, _ []string, _ any, out io.Writer) error {
	var a wire.TrashAnswer
	if err := c.do(ctx, "GET", "/trash", nil, &a); err != nil {
		return err
	}
	if len(a.Trash) == 0 {
		_, err := fmt.Fprintln(out, snapshots.TrashEmptyWords)
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BOX\tGOES\tFINAL SNAPSHOT")
	for _, e := range a.Trash {
		if e.Box == nil {
			return unreadableListing()
		}
		final := e.FinalName
		if final == "" {
			final = "none: " + e.FinalWords
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Box.Name, e.Until.Local().Format("Mon 2 Jan 15:04"), final)
	}
	return tw.Flush()
}

// trashRestore is `box trash-restore <box>`: back from the trash, with its
// history.
func trashRestore(ctx context.Context, c *client, pos []string, _ any, out io.Writer) error {
	var ans wire.OperationAnswer
	if err := c.do(ctx, "POST", "/boxes/"+seg(pos[0])+"/trash/restore?wait=true", nil, &ans); err != nil {
		return err
	}
	return printOperation(out, ans)
}

// trashEmpty is `box trash-empty <box>`: released now, with its unkept
// snapshots; --dry-run says what goes and what stays.
func trashEmpty(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	if *o.(*deleteOpts).dryRun {
		return printDry(ctx, c, "POST", "/boxes/"+seg(pos[0])+"/trash/empty?dry_run=true", nil, out)
	}
	var ans wire.OperationAnswer
	if err := c.do(ctx, "POST", "/boxes/"+seg(pos[0])+"/trash/empty?wait=true", nil, &ans); err != nil {
		var r *refusal
		if errors.As(err, &r) && strings.Contains(r.words, "Release did not finish") {
			r.words += "\nRun it again, or boxsnap box release " + pos[0] + " --delete-kept to release it and delete its kept snapshots."
		}
		return err
	}
	return printOperation(out, ans)
}

type resetOpts struct {
	keepLogins, force, dryRun *bool
	template                  *string
}

func resetFlags(fs *flag.FlagSet) any {
	return &resetOpts{keepLogins: fs.Bool("keep-logins", false, "carry the login files over (Claude Code, Codex, opencode, the GitHub CLI, and Settings' own)"),
		force:    fs.Bool("force", false, "reset past what the reset would end (Reset anyway)"),
		template: fs.String("template", "", "a box template to reset to (the box's own when left out)"),
		dryRun:   fs.Bool("dry-run", false, dryRunUsage)}
}

// reset is `box reset <box>`: a fresh box from its template, an undo taken.
func reset(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*resetOpts)
	body := wire.ResetBody{KeepLogins: *opts.keepLogins, Template: *opts.template, Force: *opts.force}
	if *opts.dryRun {
		return printDry(ctx, c, "POST", "/boxes/"+seg(pos[0])+"/reset?dry_run=true", body, out)
	}
	var ans wire.OperationAnswer
	if err := c.do(ctx, "POST", "/boxes/"+seg(pos[0])+"/reset?wait=true", body, &ans); err != nil {
		return err
	}
	return printOperation(out, ans)
}

type undoOpts struct{ force, dryRun *bool }

func undoFlags(fs *flag.FlagSet) any {
	return &undoOpts{force: fs.Bool("force", false, "undo past what the restore would end (Restore anyway)"),
		dryRun: fs.Bool("dry-run", false, dryRunUsage)}
}

// undo is `box undo <box>`: back to its newest undo, of a reset or a
// restore.
func undo(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*undoOpts)
	if *opts.dryRun {
		return printDry(ctx, c, "POST", "/boxes/"+seg(pos[0])+"/undo?dry_run=true", wire.UndoBody{Force: *opts.force}, out)
	}
	var ans wire.OperationAnswer
	if err := c.do(ctx, "POST", "/boxes/"+seg(pos[0])+"/undo?wait=true", wire.UndoBody{Force: *opts.force}, &ans); err != nil {
		return err
	}
	return printOperation(out, ans)
}
