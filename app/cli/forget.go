package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
)

type forgetOpts struct{ check *bool }

func forgetFlags(fs *flag.FlagSet) any {
	return &forgetOpts{check: fs.Bool("check", false, "say what it would forget, and forget nothing")}
}

// forgetAnswer is the API's answer to Forget.
type forgetAnswer struct {
	Lines []string `json:"lines"`
	Words string   `json:"words"`
}

// forget is `snapshot forget`: the records of a backend removed from
// settings, named first with --check (section 1; G2).
func forget(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*forgetOpts)
	method := "POST"
	if *opts.check {
		method = "GET"
	}
	var ans forgetAnswer
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
