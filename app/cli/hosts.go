package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/app/wire"
)

// move is `box move <box> <host>`: the box goes to host, the server's,
// made and restored there from its newest ready snapshot.
func move(ctx context.Context, c *client, pos []string, _ any, out io.Writer) error {
	var ans wire.OperationAnswer
	if err := c.do(ctx, "POST", "/boxes/"+seg(pos[0])+"/move?wait=true", wire.MoveBody{Host: pos[1]}, &ans); err != nil {
		return err
	}
	return printOperation(out, ans)
}

// hostList is `box hosts`: each host, when it was last seen, and what it
// owns; under a host whose queue holds work no live worker runs, the words
// that say so.
func hostList(ctx context.Context, c *client, _ []string, _ any, out io.Writer) error {
	var ans wire.HostsAnswer
	if err := c.do(ctx, "GET", "/hosts", nil, &ans); err != nil {
		return err
	}
	for _, h := range ans.Hosts {
		state := "alive"
		if h.GoneAt != nil {
			state = "marked gone " + h.GoneAt.Local().Format(time.DateTime)
		} else if !h.Alive {
			state = "not seen since " + h.LastSeen.Local().Format(time.DateTime)
		}
		this := ""
		if h.This {
			this = " (this host)"
		}
		if _, err := fmt.Fprintf(out, "%s%s: %s, %d boxes\n", h.Name, this, state, h.Boxes); err != nil {
			return err
		}
		if h.Stranded != "" {
			if _, err := fmt.Fprintf(out, "  %s\n", h.Stranded); err != nil {
				return err
			}
		}
	}
	return nil
}

// hostGone is `box host-gone <host>`: the person's word that the host is
// gone for good.
func hostGone(ctx context.Context, c *client, pos []string, _ any, out io.Writer) error {
	var ans wire.HostAnswer
	if err := c.do(ctx, "POST", "/hosts/"+seg(pos[0])+"/gone", nil, &ans); err != nil {
		return err
	}
	_, err := fmt.Fprintln(out, hosts.MarkedGoneWords(ans.Name, ans.Boxes))
	return err
}

// takeover is `box takeover <host>`: a gone host's boxes, made on the
// server's host and restored there from their newest snapshots.
func takeover(ctx context.Context, c *client, pos []string, _ any, out io.Writer) error {
	var ans wire.TakeOverAnswer
	if err := c.do(ctx, "POST", "/hosts/"+seg(pos[0])+"/takeover", wire.TakeOverBody{}, &ans); err != nil {
		return err
	}
	for _, m := range ans.Taken {
		if _, err := fmt.Fprintf(out, "%s: taken over by host %s (operation %s)\n", m.Name, ans.To, m.Operation); err != nil {
			return err
		}
	}
	for _, m := range ans.Left {
		if _, err := fmt.Fprintf(out, "%s: %s\n", m.Name, m.Why); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(out, hosts.TakenOverWords(&ans))
	return err
}
