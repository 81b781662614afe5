package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
	"github.com/boxsnap/boxsnap/app/wire"
)

// head is `snapshot head`: with a snapshot it becomes the box's head,
// without a restore; without one it says the box's head.
func head(ctx context.Context, c *client, pos []string, _ any, out io.Writer) error {
	if len(pos) == 2 {
		var a wire.HeadAnswer
		if err := c.do(ctx, "PUT", "/boxes/"+seg(pos[0])+"/head", wire.HeadBody{Snapshot: pos[1]}, &a); err != nil {
			return err
		}
		if a.Message == "" {
			return notJSON(c.base)
		}
		fmt.Fprintln(out, a.Message)
		return nil
	}
	var l heads.Lineage
	if err := c.do(ctx, "GET", "/boxes/"+seg(pos[0])+"/lineage", nil, &l); err != nil {
		return err
	}
	switch {
	case l.Chain == nil:
		return notJSON(c.base)
	case l.Head == nil:
		fmt.Fprintln(out, heads.NoHeadWords(pos[0], "boxsnap snapshot head "+pos[0]+" <snapshot>"))
	case l.Head.Hidden:
		fmt.Fprintln(out, heads.HeadIsWords(heads.HiddenHeadWords, pos[0]))
	default:
		fmt.Fprintln(out, heads.HeadIsWords(snapshots.NamedID(l.Head.Name, l.Head.ID), pos[0]))
	}
	return nil
}
