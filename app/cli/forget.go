package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/boxsnap/boxsnap/app/wire"
)

type forgetOpts struct{ check *bool }

func forgetFlags(fs *flag.FlagSet) any {
	return &forgetOpts{check: fs.Bool("check", false, "say what it would forget, and forget nothing")}
}

// forget is `snapshot forget`: the records of a backend removed from
// settings, named first with --check: a backend that cannot be reached loses
// nothing until the person says so.
func forget(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*forgetOpts)
	method := "POST"
	if *opts.check {
		method = "GET"
	}
	var ans wire.ForgetAnswer
	if err := c.do(ctx, method, "/backends/"+seg(pos[0])+"/forget", nil, &ans); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(out, ans.Words); err != nil {
		return err
	}
	for _, l := range ans.Lines {
		if _, err := fmt.Fprintln(out, "· "+l); err != nil {
			return err
		}
	}
	return nil
}
