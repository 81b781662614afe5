package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"

	"github.com/boxsnap/boxsnap/app/wire"
)

// forkCountFlagWords refuse a --count below 1, which would fork nothing.
const forkCountFlagWords = "--count is how many boxes to fork into, 1 or more; leave it out for one."

type forkOpts struct {
	asMachine, check *bool
	name             *string
	count            *int
	// countSet says --count was given, so --count 0 is told from none.
	countSet *bool
}

func forkFlags(fs *flag.FlagSet) any {
	o := &forkOpts{asMachine: fs.Bool("as-machine", false, "make the fork one of your machines"),
		name: fs.String("name", "", "the new box's name"), check: fs.Bool("check", false, "say whether it can be forked, and change nothing"),
		count: new(int), countSet: new(bool)}
	fs.Func("count", "fork into this many boxes from the one snapshot, named <name>-1 … <name>-N", func(v string) error {
		n, err := strconv.Atoi(v)
		*o.count, *o.countSet = n, err == nil
		return err
	})
	return o
}

// fork is `snapshot fork`: it waits for the fork and says what it made, or
// with --check says whether the snapshot can be forked, from its plan, and
// changes nothing. A check that says no exits as a refusal does.
func fork(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*forkOpts)
	path := "/boxes/" + seg(pos[0]) + "/snapshots/" + seg(pos[1]) + "/fork"
	if *opts.check {
		if *opts.name != "" {
			path += "?" + url.Values{"name": {*opts.name}}.Encode()
		}
		var ans wire.ForkCheckAnswer
		if err := c.do(ctx, "GET", path, nil, &ans); err != nil {
			return err
		}
		if !ans.OK {
			return &refusal{words: ans.Message}
		}
		_, err := fmt.Fprintln(out, ans.Message)
		return err
	}
	if *opts.countSet && *opts.count < 1 {
		return &refusal{words: forkCountFlagWords}
	}
	if *opts.countSet {
		return forkMany(ctx, c, path, opts, out)
	}
	var ans wire.OperationAnswer
	body := wire.ForkBody{Name: *opts.name, AsMachine: *opts.asMachine}
	if err := c.do(ctx, "POST", path+"?wait=true", body, &ans); err != nil {
		return err
	}
	return printOperation(out, ans)
}
