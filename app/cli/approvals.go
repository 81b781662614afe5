package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// approvalList is the API's list of requests waiting for the person's word.
type approvalList struct {
	Approvals []struct {
		ID           string   `json:"id"`
		BoxName      string   `json:"boxName"`
		SnapshotName string   `json:"snapshotName"`
		ThreadTitle  string   `json:"threadTitle"`
		Plan         []string `json:"plan"`
	} `json:"approvals"`
}

// approvals is `snapshot approvals`: each request with its plan.
func approvals(ctx context.Context, c *client, _ []string, _ any, out io.Writer) error {
	var ans approvalList
	if err := c.do(ctx, "GET", "/approvals", nil, &ans); err != nil {
		return err
	}
	if len(ans.Approvals) == 0 {
		_, err := fmt.Fprintln(out, snapshots.NoRequestsWords)
		return err
	}
	for _, a := range ans.Approvals {
		if _, err := fmt.Fprintf(out, "%s  %s\n    %s\n", a.ID, snapshots.AsksWords(a.ThreadTitle, a.BoxName, a.SnapshotName), strings.Join(a.Plan, "\n    ")); err != nil {
			return err
		}
	}
	return nil
}

// approve is `snapshot approve <request>`: the restore runs on your yes.
func approve(ctx context.Context, c *client, pos []string, _ any, out io.Writer) error {
	var ans operationAnswer
	if err := c.do(ctx, "POST", "/approvals/"+seg(pos[0])+"/approve?wait=true", map[string]any{}, &ans); err != nil {
		return err
	}
	return printOperation(out, ans)
}

// decline is `snapshot decline <request>`: nothing is restored.
func decline(ctx context.Context, c *client, pos []string, _ any, out io.Writer) error {
	var ans struct {
		Answer string `json:"answer"`
	}
	if err := c.do(ctx, "POST", "/approvals/"+seg(pos[0])+"/decline", map[string]any{}, &ans); err != nil {
		return err
	}
	_, err := fmt.Fprintln(out, ans.Answer)
	return err
}
