package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
	// The package is named as one request: this file's approvals is the command.
	approval "github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/app/wire"
)

// approvals is `snapshot approvals`: each request with its plan.
func approvals(ctx context.Context, c *client, _ []string, _ any, out io.Writer) error {
	var ans wire.ApprovalsAnswer
	if err := c.do(ctx, "GET", "/approvals", nil, &ans); err != nil {
		return err
	}
	if len(ans.Approvals) == 0 {
		_, err := fmt.Fprintln(out, snapshots.NoRequestsWords)
		return err
	}
	for _, a := range ans.Approvals {
		if a == nil {
			return unreadableListing()
		}
		if _, err := fmt.Fprintf(out, "%s  %s\n    %s\n", a.ID, snapshots.AsksWords(a.ThreadTitle, a.BoxName, a.SnapshotName), strings.Join(a.Plan, "\n    ")); err != nil {
			return err
		}
	}
	return nil
}

// approve is `snapshot approve <request>`: the restore runs on your yes.
func approve(ctx context.Context, c *client, pos []string, _ any, out io.Writer) error {
	var ans wire.OperationAnswer
	if err := c.do(ctx, "POST", "/approvals/"+seg(pos[0])+"/approve?wait=true", wire.RequestBody{}, &ans); err != nil {
		return err
	}
	return printOperation(out, ans)
}

// decline is `snapshot decline <request>`: nothing is restored.
func decline(ctx context.Context, c *client, pos []string, _ any, out io.Writer) error {
	var ans approval.Approval
	if err := c.do(ctx, "POST", "/approvals/"+seg(pos[0])+"/decline", wire.RequestBody{}, &ans); err != nil {
		return err
	}
	answer := ""
	if ans.Answer != nil {
		answer = *ans.Answer
	}
	_, err := fmt.Fprintln(out, answer)
	return err
}
