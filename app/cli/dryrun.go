package cli

import (
	"context"
	"fmt"
	"io"
)

// dryAnswer is what a route's ?dry_run=true answers: the plan in words.
type dryAnswer struct {
	Message string `json:"message"`
}

// dryRunUsage is the --dry-run flag's help, the same on every command that
// deletes or overwrites.
const dryRunUsage = "say what it would do, after every check it runs, and change nothing"

// printDry asks for a route's dry run and prints its plan.
func printDry(ctx context.Context, c *client, method, path string, body any, out io.Writer) error {
	var ans dryAnswer
	if err := c.do(ctx, method, path, body, &ans); err != nil {
		return err
	}
	_, err := fmt.Fprintln(out, ans.Message)
	return err
}
