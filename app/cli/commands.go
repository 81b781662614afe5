package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"

	"github.com/boxsnap/boxsnap/app/wire"
)

type takeOpts struct {
	name, note *string
	memory     *bool
}

func takeFlags(fs *flag.FlagSet) any {
	return &takeOpts{name: fs.String("name", "", "its name"), note: fs.String("note", "", "its note"), memory: fs.Bool("memory", false, "hold memory too")}
}

// take is `snapshot take`: it waits for the take and says what it took.
func take(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*takeOpts)
	var ans wire.OperationAnswer
	body := wire.TakeBody{Name: *opts.name, Note: *opts.note, Memory: *opts.memory}
	if err := c.do(ctx, "POST", "/boxes/"+seg(pos[0])+"/snapshots?wait=true", body, &ans); err != nil {
		return err
	}
	return printOperation(out, ans)
}

// printOperation prints a finished operation's words, or that it still
// runs.
func printOperation(out io.Writer, ans wire.OperationAnswer) error {
	_, err := fmt.Fprintln(out, ans.Message)
	return err
}

type listOpts struct{ kept, automatic, saved, json *bool }

func listFlags(fs *flag.FlagSet) any {
	return &listOpts{kept: fs.Bool("kept", false, "kept ones only"), automatic: fs.Bool("automatic", false, "automatic ones only"),
		saved: fs.Bool("saved", false, "saved ones only (not automatic)"), json: fs.Bool("json", false, "the API's JSON")}
}

// list is `snapshot list`: a table per box, or with --json the API's own
// answer.
func list(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*listOpts)
	q := url.Values{}
	if len(pos) == 1 {
		q.Set("box", pos[0])
	}
	if *opts.kept {
		q.Set("kept", "true")
	}
	switch {
	case *opts.automatic && *opts.saved:
		return errors.New("list takes --automatic or --saved, not both")
	case *opts.automatic:
		q.Set("automatic", "true")
	case *opts.saved:
		q.Set("automatic", "false")
	}
	path := "/snapshots"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	ans, pages, err := listingPages(ctx, c, path)
	if err != nil {
		return err
	}
	if *opts.json {
		return writeListingJSON(out, pages)
	}
	return printListing(ctx, c, pos, ans, *opts.kept, out)
}

type deleteOpts struct{ dryRun *bool }

func deleteFlags(fs *flag.FlagSet) any {
	return &deleteOpts{dryRun: fs.Bool("dry-run", false, dryRunUsage)}
}

// deleteSnapshot is `snapshot delete`: it says what it freed, where known.
func deleteSnapshot(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	if *o.(*deleteOpts).dryRun {
		return printDry(ctx, c, "DELETE", "/boxes/"+seg(pos[0])+"/snapshots/"+seg(pos[1])+"?dry_run=true", nil, out)
	}
	var ans wire.OperationAnswer
	if err := c.do(ctx, "DELETE", "/boxes/"+seg(pos[0])+"/snapshots/"+seg(pos[1])+"?wait=true", nil, &ans); err != nil {
		return err
	}
	return printOperation(out, ans)
}

type restoreOpts struct{ replace, noUndo, force, dryRun *bool }

func restoreFlags(fs *flag.FlagSet) any {
	return &restoreOpts{replace: fs.Bool("replace", false, "replace everything since the snapshot"),
		noUndo: fs.Bool("no-undo", false, "restore without an undo"), force: fs.Bool("force", false, "restore anyway"),
		dryRun: fs.Bool("dry-run", false, dryRunUsage)}
}

// restore is `snapshot restore`: --replace is required, as the agent's
// replace: true is.
func restore(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*restoreOpts)
	if *opts.dryRun {
		replace := true // a dry run replaces nothing
		return printDry(ctx, c, "POST", "/boxes/"+seg(pos[0])+"/snapshots/"+seg(pos[1])+"/restore?dry_run=true",
			wire.RestoreBody{Replace: &replace, NoUndo: *opts.noUndo, Force: *opts.force}, out)
	}
	if !*opts.replace {
		return fmt.Errorf("a restore replaces everything on %s since the snapshot: pass --replace to say so", pos[0])
	}
	var ans wire.OperationAnswer
	replace := true
	body := wire.RestoreBody{Replace: &replace, NoUndo: *opts.noUndo, Force: *opts.force}
	if err := c.do(ctx, "POST", "/boxes/"+seg(pos[0])+"/snapshots/"+seg(pos[1])+"/restore?wait=true", body, &ans); err != nil {
		return err
	}
	return printOperation(out, ans)
}

type keepOpts struct {
	days  *int
	until *string
}

func keepFlags(fs *flag.FlagSet) any {
	return &keepOpts{days: fs.Int("days", 0, "keep it this many days from today"), until: fs.String("until", "", "keep it until this date (YYYY-MM-DD)")}
}

// keep is `snapshot keep`: for the setting's days, --days, or --until.
func keep(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*keepOpts)
	body := wire.KeepBody{Days: *opts.days, Until: *opts.until}
	var ans wire.OperationAnswer
	if err := c.do(ctx, "POST", "/boxes/"+seg(pos[0])+"/snapshots/"+seg(pos[1])+"/keep?wait=true", body, &ans); err != nil {
		return err
	}
	return printOperation(out, ans)
}

// renew is `snapshot renew`: "Keep 30 more days" for a kept snapshot.
func renew(ctx context.Context, c *client, pos []string, _ any, out io.Writer) error {
	var ans wire.OperationAnswer
	if err := c.do(ctx, "POST", "/boxes/"+seg(pos[0])+"/snapshots/"+seg(pos[1])+"/renew?wait=true", wire.RequestBody{}, &ans); err != nil {
		return err
	}
	return printOperation(out, ans)
}

// unkeep is `snapshot unkeep`.
func unkeep(ctx context.Context, c *client, pos []string, _ any, out io.Writer) error {
	var ans wire.OperationAnswer
	if err := c.do(ctx, "POST", "/boxes/"+seg(pos[0])+"/snapshots/"+seg(pos[1])+"/unkeep?wait=true", wire.RequestBody{}, &ans); err != nil {
		return err
	}
	return printOperation(out, ans)
}

// rename is `snapshot rename`.
func rename(ctx context.Context, c *client, pos []string, _ any, out io.Writer) error {
	var sn wire.ListedFull
	if err := c.do(ctx, "PUT", "/boxes/"+seg(pos[0])+"/snapshots/"+seg(pos[1])+"/name", wire.RenameBody{Name: pos[2]}, &sn); err != nil {
		return err
	}
	if sn.Snapshot == nil {
		return notJSON(c.base)
	}
	fmt.Fprintf(out, "Renamed %s to ‘%s’.\n", sn.ID, sn.Name)
	return nil
}

// note is `snapshot note`; an empty text clears it.
func note(ctx context.Context, c *client, pos []string, _ any, out io.Writer) error {
	var sn wire.ListedFull
	if err := c.do(ctx, "PUT", "/boxes/"+seg(pos[0])+"/snapshots/"+seg(pos[1])+"/note", wire.NoteBody{Note: pos[2]}, &sn); err != nil {
		return err
	}
	if sn.Snapshot == nil {
		return notJSON(c.base)
	}
	if sn.Note == nil {
		fmt.Fprintf(out, "Cleared the note of ‘%s’.\n", sn.Name)
	} else {
		fmt.Fprintf(out, "Saved the note of ‘%s’.\n", sn.Name)
	}
	return nil
}
