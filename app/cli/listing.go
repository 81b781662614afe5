package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
)

// listingPages reads the listing from path on: it comes a page of boxes at
// a time, and every page is read, in order. It answers the boxes of every
// page, and each page as the API wrote it, for --json.
func listingPages(ctx context.Context, c *client, path string) (wire.ListAnswer, []json.RawMessage, error) {
	var ans wire.ListAnswer
	var pages []json.RawMessage
	for path != "" {
		var raw json.RawMessage
		if err := c.do(ctx, "GET", path, nil, &raw); err != nil {
			return ans, nil, err
		}
		var page wire.ListAnswer
		if err := json.Unmarshal(raw, &page); err != nil {
			return ans, nil, unreadableListing()
		}
		pages = append(pages, raw)
		ans.Boxes = append(ans.Boxes, page.Boxes...)
		if path = page.Next; len(pages) > 100000 {
			return ans, nil, errors.New("boxsnap's listing did not end")
		}
	}
	return ans, pages, nil
}

// writeListingJSON writes the API's own answer: one page as it came, or
// every page's boxes in one document, as one page is.
func writeListingJSON(out io.Writer, pages []json.RawMessage) error {
	if len(pages) == 1 {
		_, err := out.Write(append(pages[0], '\n'))
		return err
	}
	var doc struct {
		Boxes []json.RawMessage `json:"boxes"`
	}
	doc.Boxes = []json.RawMessage{}
	for _, raw := range pages {
		var p struct {
			Boxes []json.RawMessage `json:"boxes"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return unreadableListing()
		}
		doc.Boxes = append(doc.Boxes, p.Boxes...)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode the listing: %w", err)
	}
	_, err = out.Write(append(b, '\n'))
	return err
}

// printListing prints the listing as a table per box.
func printListing(ctx context.Context, c *client, pos []string, ans wire.ListAnswer, keptOnly bool, out io.Writer) error {
	if len(ans.Boxes) == 0 {
		if keptOnly {
			fmt.Fprintln(out, "No kept snapshots.")
		} else {
			fmt.Fprintln(out, "No snapshots.")
		}
		return nil
	}
	for i, b := range ans.Boxes {
		if i > 0 {
			fmt.Fprintln(out)
		}
		if b.Box == nil {
			return unreadableListing()
		}
		head := b.Box.Name + ": " + b.OfLimit
		if b.Box.State == snapshots.BoxReleased {
			head = b.Box.Name + " (released)"
		}
		fmt.Fprintln(out, head)
		if stopped := stoppedWords(ctx, c, pos, b.Box.ID, b.Box.State); stopped != "" {
			fmt.Fprintln(out, "  "+stopped)
		}
		if len(b.Snapshots) == 0 {
			fmt.Fprintln(out, "  No snapshots.")
			continue
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  NAME\tID\tTAKEN\tBY\tHOLDS\tSIZE\tKEPT\tSTATE")
		for _, s := range b.Snapshots {
			kept := "no"
			if s.KeptUntil != nil {
				kept = "until " + s.KeptUntil.UTC().Format("2 Jan 2006")
			}
			name := s.Name
			if s.Undo {
				name += " (undo)"
			}
			if s.Automatic {
				name += " (automatic)"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, s.ID, s.When, s.By, s.Holds, s.Size, kept, s.State)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// stoppedWords are why the box's backend stopped it by itself (it reached
// its disk bound), as the API's box says, for a listing of one box; "" for
// a listing of all (each box would be one more request) or a released box.
func stoppedWords(ctx context.Context, c *client, pos []string, id string, state snapshots.BoxState) string {
	if len(pos) != 1 || id == "" || state == snapshots.BoxReleased {
		return ""
	}
	var ans wire.BoxAnswer
	if c.do(ctx, "GET", "/boxes/"+seg(id), nil, &ans) != nil {
		return ""
	}
	return ans.Stopped
}
