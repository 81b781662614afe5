package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
)

// send sends one request with a streamed body (or none) and answers the
// response when it is not an error; an error answer becomes its words.
func (c *client) send(ctx context.Context, base, method, path, contentType string, body io.Reader, token bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, base+"/api/v1"+path, body)
	if err != nil {
		return nil, badAddress(base)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, unreachable(base, err)
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes))
		return nil, errorAnswer(base, resp.Status, raw)
	}
	return resp, nil
}

type exportOpts struct{ out, base *string }

func exportFlags(fs *flag.FlagSet) any {
	return &exportOpts{out: fs.String("o", "", "the file to write"), base: fs.String("base", "", "a snapshot the receiver holds")}
}

// export is `snapshot export`: one file of the box's snapshots, written
// under a temporary name and renamed once whole, so a file that exists is
// never cut short.
func export(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*exportOpts)
	if *opts.out == "" {
		return &refusal{words: "say where to write it: -o FILE"}
	}
	q := url.Values{}
	for _, s := range pos[1:] {
		q.Add("snapshot", s)
	}
	if *opts.base != "" {
		q.Set("base", *opts.base)
	}
	resp, err := c.send(ctx, c.base, "GET", "/boxes/"+seg(pos[0])+"/export?"+q.Encode(), "", nil, true)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
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
		return &refusal{words: fmt.Sprintf("the export was cut short: %v; %s was not written", err, dst)}
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return &refusal{words: fmt.Sprintf("cannot write %s: %v", dst, err)}
	}
	_, err = fmt.Fprintf(out, "Wrote %s (%s) with %d snapshot(s) of %s.\n", dst, snapshots.FileSizeWords(n), len(pos)-1, pos[0])
	return err
}

// importFiles is `snapshot import`: the files go up as one streamed
// multipart request, checked whole by the server before anything is
// published.
func importFiles(ctx context.Context, c *client, pos []string, _ any, out io.Writer) error {
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, p := range pos {
		f, err := os.Open(p)
		if err != nil {
			return &refusal{words: fmt.Sprintf("cannot read %s: %v. Nothing was imported.", p, err)}
		}
		files = append(files, f)
	}
	readers := make([]namedReader, len(files))
	for i, f := range files {
		readers[i] = namedReader{name: filepath.Base(f.Name()), r: f}
	}
	return c.upload(ctx, readers, out)
}

type namedReader struct {
	name string
	r    io.Reader
}

// upload streams files to this server's /import and prints its words.
func (c *client) upload(ctx context.Context, files []namedReader, out io.Writer) error {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		for _, f := range files {
			w, err := mw.CreateFormFile("file", f.name)
			if err == nil {
				_, err = io.Copy(w, f.r)
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(mw.Close())
	}()
	resp, err := c.send(ctx, c.base, "POST", "/import", mw.FormDataContentType(), pr, true)
	pr.CloseWithError(errors.New("import stopped"))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes))
	if err != nil {
		return notJSON(c.base)
	}
	// An import that still runs past the server's wait answers its
	// operation instead, with words to ask again.
	var ans wire.ImportAnswer
	var running wire.OperationAnswer
	var words string
	switch {
	case json.Unmarshal(raw, &ans) == nil && ans.ImportResult != nil && ans.Words != "":
		words = ans.Words
	case json.Unmarshal(raw, &running) == nil:
		words = running.Message
	default:
		return notJSON(c.base)
	}
	_, err = fmt.Fprintln(out, words)
	return err
}

type shareOpts struct{ days *int }

func shareFlags(fs *flag.FlagSet) any {
	return &shareOpts{days: fs.Int("days", 0, "how long the code works, 1 to 30 (default: the setting)")}
}

// share is `snapshot share`: it prints the code, once.
func share(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*shareOpts)
	var ans wire.ShareAnswer
	if err := c.do(ctx, "POST", "/boxes/"+seg(pos[0])+"/snapshots/"+seg(pos[1])+"/shares", wire.ShareBody{Days: *opts.days}, &ans); err != nil {
		return err
	}
	_, err := fmt.Fprintf(out, "%s\n%s\n", ans.Code, ans.Message)
	return err
}

// shares is `snapshot shares`: every share code's record, never a code.
func shares(ctx context.Context, c *client, _ []string, _ any, out io.Writer) error {
	var ans wire.SharesAnswer
	if err := c.do(ctx, "GET", "/shares", nil, &ans); err != nil {
		return err
	}
	if len(ans.Shares) == 0 {
		_, err := fmt.Fprintln(out, snapshots.NoShareCodesWords)
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSNAPSHOT\tUNTIL\tREDEEMED\tLEAVES OUT")
	for _, s := range ans.Shares {
		if s == nil {
			return unreadableListing()
		}
		until := s.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC")
		if s.RevokedAt != nil {
			until = "revoked"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", s.ID, s.SnapshotID, until, s.Redeemed, strings.Join(s.Removed, ", "))
	}
	return tw.Flush()
}

// unshare is `snapshot unshare`: it revokes a share code.
func unshare(ctx context.Context, c *client, pos []string, _ any, out io.Writer) error {
	if err := c.do(ctx, "DELETE", "/shares/"+seg(pos[0]), nil, nil); err != nil {
		return err
	}
	_, err := fmt.Fprintln(out, snapshots.RevokedWords(pos[0]))
	return err
}

type redeemOpts struct{ from *string }

func redeemFlags(fs *flag.FlagSet) any {
	return &redeemOpts{from: fs.String("from", "", "the address of the boxsnap that made the code, when it is another (https://host:port)")}
}

// redeem is `snapshot redeem`: the code's copy becomes a new box here. With
// --from, this boxsnap takes the copy from that one's share endpoint (the
// code is its own authority there) and imports it.
func redeem(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*redeemOpts)
	body := wire.RedeemBody{Code: strings.TrimSpace(pos[0]), From: strings.TrimSpace(*opts.from)}
	var ans wire.ImportAnswer
	if err := c.do(ctx, "POST", "/shares/redeem", body, &ans); err != nil {
		return err
	}
	if ans.ImportResult == nil {
		return notJSON(c.base)
	}
	_, err := fmt.Fprintln(out, ans.Words)
	return err
}
