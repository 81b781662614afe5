package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
)

type saveOpts struct{ name *string }

func saveFlags(fs *flag.FlagSet) any {
	return &saveOpts{name: fs.String("name", "", "a new name for it")}
}

// save is `snapshot save`: an automatic snapshot becomes an ordinary one.
func save(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*saveOpts)
	var sn wire.ListedFull
	if err := c.do(ctx, "POST", "/boxes/"+seg(pos[0])+"/snapshots/"+seg(pos[1])+"/save", wire.SaveBody{Name: *opts.name}, &sn); err != nil {
		return err
	}
	if sn.Snapshot == nil {
		return notJSON(c.base)
	}
	fmt.Fprintln(out, snapshots.SavedWords(sn.Name, " ("+sn.ID+")", pos[0]))
	return nil
}

// unsave is `snapshot unsave`: a saved snapshot becomes automatic again.
func unsave(ctx context.Context, c *client, pos []string, _ any, out io.Writer) error {
	var sn wire.ListedFull
	if err := c.do(ctx, "POST", "/boxes/"+seg(pos[0])+"/snapshots/"+seg(pos[1])+"/unsave", wire.RequestBody{}, &sn); err != nil {
		return err
	}
	if sn.Snapshot == nil {
		return notJSON(c.base)
	}
	fmt.Fprintln(out, snapshots.UnsavedWords(sn.Name, " ("+sn.ID+")"))
	return nil
}

type historyOpts struct {
	automatic *string
	maxGiB    *string
}

func historyFlags(fs *flag.FlagSet) any {
	return &historyOpts{automatic: fs.String("automatic", "", "on, off, or backend (follow the backend's setting)"),
		maxGiB: fs.String("max-gib", "", "GiB of held data past which the oldest automatic snapshot goes, or default")}
}

// history is `snapshot history`: a box's automatic history settings, and
// with --automatic or --max-gib it sets them.
func history(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*historyOpts)
	path := "/boxes/" + seg(pos[0]) + "/history"
	var ans snapshots.BoxHistory
	if *opts.automatic == "" && *opts.maxGiB == "" {
		if err := c.do(ctx, "GET", path, nil, &ans); err != nil {
			return err
		}
	} else {
		if err := c.do(ctx, "GET", path, nil, &ans); err != nil {
			return err
		}
		body := wire.HistoryBody{Automatic: ans.Automatic, MaxGiB: ans.MaxGiB}
		on, off := true, false
		switch *opts.automatic {
		case "":
		case "on":
			body.Automatic = &on
		case "off":
			body.Automatic = &off
		case "backend":
			body.Automatic = nil
		default:
			return errors.New("--automatic is on, off or backend")
		}
		switch *opts.maxGiB {
		case "":
		case "default":
			body.MaxGiB = nil
		default:
			n, err := strconv.ParseInt(*opts.maxGiB, 10, 64)
			if err != nil {
				return errors.New("--max-gib is a number of GiB, or default")
			}
			body.MaxGiB = &n
		}
		if err := c.do(ctx, "PUT", path, body, &ans); err != nil {
			return err
		}
	}
	state := "off"
	if ans.On {
		state = fmt.Sprintf("on, checked every %d s while it runs", ans.Every)
	}
	whose := "the backend's setting"
	if ans.Automatic != nil {
		whose = "this box's own setting"
	}
	fmt.Fprintf(out, "%s: automatic snapshots %s (%s); %d held; the oldest goes past %d GiB held.\n", pos[0], state, whose, ans.Count, ans.LimitGiB)
	return nil
}

type deleteHistoryOpts struct{ confirm *string }

func deleteHistoryFlags(fs *flag.FlagSet) any {
	return &deleteHistoryOpts{confirm: fs.String("confirm", "", "the box's name, typed again")}
}

// deleteHistory is `snapshot delete-history`: every automatic snapshot of
// the box goes, once --confirm names the box.
func deleteHistory(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*deleteHistoryOpts)
	var ans wire.OperationAnswer
	if err := c.do(ctx, "DELETE", "/boxes/"+seg(pos[0])+"/history?wait=true", wire.DeleteHistoryBody{Confirm: *opts.confirm}, &ans); err != nil {
		return err
	}
	if ans.Operation == nil {
		fmt.Fprintln(out, snapshots.NoHistoryToDeleteWords(pos[0]))
		return nil
	}
	return printOperation(out, ans)
}
