package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
)

type filesOpts struct{ json *bool }

func filesFlags(fs *flag.FlagSet) any {
	return &filesOpts{json: fs.Bool("json", false, "the API's JSON")}
}

// snapshotPath is the API's path of a snapshot's route, with ?path= when
// one is given.
func snapshotPath(pos []string, route string, q url.Values) string {
	if len(pos) > 2 && pos[2] != "" {
		q.Set("path", pos[2])
	}
	p := "/boxes/" + seg(pos[0]) + "/snapshots/" + seg(pos[1]) + "/" + route
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p
}

// files is `snapshot files`: one folder of a snapshot, folders first, links
// as links; for a file, its entry.
func files(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*filesOpts)
	var raw json.RawMessage
	err := c.do(ctx, "GET", snapshotPath(pos, "files", url.Values{}), nil, &raw)
	if err != nil {
		// A file is not a folder: show its entry, as ls does.
		var f wire.FileAnswer
		if len(pos) < 3 || c.do(ctx, "GET", snapshotPath(pos, "file", url.Values{}), nil, &f) != nil {
			return err
		}
		if *opts.json {
			return json.NewEncoder(out).Encode(struct {
				Entry wire.FileEntry `json:"entry"`
			}{f.Entry})
		}
		return printEntries(out, []wire.FileEntry{f.Entry})
	}
	if *opts.json {
		_, err := out.Write(append(raw, '\n'))
		return err
	}
	var ans wire.FilesAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return unreadableListing()
	}
	if len(ans.Entries) == 0 {
		_, err := fmt.Fprintln(out, snapshots.EmptyFolderWords)
		return err
	}
	return printEntries(out, ans.Entries)
}

func printEntries(out io.Writer, es []wire.FileEntry) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, e := range es {
		mode := fs.FileMode(e.Mode & 0o777)
		kind := map[string]string{"dir": "d", "link": "l", "file": "-"}[e.Type]
		if kind == "" {
			kind = "?"
		}
		name := e.Path[strings.LastIndex(e.Path, "/")+1:]
		size := strconv.FormatInt(e.Size, 10)
		switch e.Type {
		case "dir":
			name += "/"
			size = "-"
		case "link":
			name += " -> " + e.Target
			size = "-"
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\n", kind, mode.String()[1:], size, e.ModTime.UTC().Format("2006-01-02 15:04"), name)
	}
	return tw.Flush()
}

type downloadOpts struct{ out *string }

func downloadFlags(fs *flag.FlagSet) any {
	return &downloadOpts{out: fs.String("o", "", "the file to write, or - for the standard output")}
}

// download is `snapshot download`: a file of a snapshot, or a folder as a
// tar.gz, written under a temporary name and renamed once whole.
func download(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*downloadOpts)
	if *opts.out == "" {
		return &refusal{words: "say where to write it: -o FILE (or -o - for the standard output)"}
	}
	resp, err := c.send(ctx, c.base, "GET", snapshotPath(pos, "download", url.Values{}), "", nil, true)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if *opts.out == "-" {
		_, err := io.Copy(out, resp.Body)
		return err
	}
	dst := *opts.out
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".part-")
	if err != nil {
		return &refusal{words: fmt.Sprintf("cannot write %s: %v", dst, err)}
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, resp.Body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &refusal{words: fmt.Sprintf("the download was cut short: %v; %s was not written", err, dst)}
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return &refusal{words: fmt.Sprintf("cannot write %s: %v", dst, err)}
	}
	what := "the whole snapshot as a tar.gz"
	if len(pos) > 2 && pos[2] != "" {
		what = pos[2]
		if resp.Header.Get("Content-Type") == "application/gzip" {
			what += " as a tar.gz"
		}
	}
	_, err = fmt.Fprintf(out, "Wrote %s (%s): %s of ‘%s’.\n", dst, snapshots.FileSizeWords(n), what, pos[1])
	return err
}

type diffOpts struct {
	against *string
	all     *bool
	json    *bool
}

func diffFlags(fs *flag.FlagSet) any {
	return &diffOpts{against: fs.String("against", "", "another snapshot of the box (the box now when left out)"),
		all: fs.Bool("all", false, "every change, not only the first 1000"), json: fs.Bool("json", false, "the API's JSON")}
}

// diff is `snapshot diff`: what changed since a snapshot, in the box now or
// in another snapshot (--against), or with a path, that file's unified diff.
func diff(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*diffOpts)
	offset := 0
	for {
		q := url.Values{}
		if *opts.against != "" {
			q.Set("against", *opts.against)
		}
		q.Set("limit", "1000")
		if offset > 0 {
			q.Set("offset", strconv.Itoa(offset))
		}
		var raw json.RawMessage
		if err := c.do(ctx, "GET", snapshotPath(pos, "diff", q), nil, &raw); err != nil {
			return err
		}
		if *opts.json {
			if _, err := out.Write(append(raw, '\n')); err != nil {
				return err
			}
		}
		var ans wire.DiffAnswer
		if err := json.Unmarshal(raw, &ans); err != nil {
			return &refusal{words: "boxsnap answered a comparison the CLI cannot read"}
		}
		if ans.Diff != nil {
			if *opts.json {
				return nil
			}
			if *ans.Diff == "" {
				_, err := fmt.Fprintln(out, ans.Message)
				return err
			}
			_, err := io.WriteString(out, *ans.Diff)
			return err
		}
		if !*opts.json {
			if offset == 0 {
				fmt.Fprintln(out, strings.SplitN(ans.Message, ". Listing", 2)[0])
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			for _, ch := range ans.Changes {
				name := ch.Path
				if ch.Type == "dir" {
					name += "/"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", ch.Change, sizeChange(ch.Before, ch.After), name)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		if ans.Next == nil {
			return nil
		}
		if !*opts.all {
			if !*opts.json {
				fmt.Fprintf(out, "… and %d more: --all lists them.\n", ans.Total-*ans.Next)
			}
			return nil
		}
		offset = *ans.Next
	}
}

func sizeChange(before, after *int64) string {
	s := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatInt(*p, 10)
	}
	if before == nil && after == nil {
		return "-"
	}
	return s(before) + " → " + s(after)
}
