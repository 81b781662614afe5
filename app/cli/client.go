package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/boxsnap/boxsnap/app/wire"
)

// MaxAnswerBytes caps what the CLI reads of one answer.
const MaxAnswerBytes = 32 << 20

// client calls the API with the owner's token.
type client struct {
	base  string // the server's address, without a trailing slash
	token string
	http  *http.Client
}

// refusal is an answer in words the CLI prints on stderr.
type refusal struct{ words string }

func (r *refusal) Error() string { return r.words }

// do sends one request to /api/v1+path and decodes a JSON answer into out
// (raw, when out is *json.RawMessage).
func (c *client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode the request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/api/v1"+path, rd)
	if err != nil {
		return badAddress(c.base)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return unreachable(c.base, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes))
	if err != nil {
		return &refusal{words: fmt.Sprintf("the answer from %s was cut short: %v", redact(c.base), err)}
	}
	if resp.StatusCode >= 400 {
		return errorAnswer(c.base, resp.Status, raw)
	}
	if out == nil {
		return nil
	}
	if rm, ok := out.(*json.RawMessage); ok {
		*rm = append((*rm)[:0], raw...)
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return notJSON(c.base)
	}
	return nil
}

// The words of the CLI's own refusals about the server it talks to, the
// same for every request it sends.

func badAddress(base string) *refusal {
	return &refusal{words: fmt.Sprintf("the server address %s is not a URL such as http://127.0.0.1:8080", redact(base))}
}

func unreachable(base string, err error) *refusal {
	return &refusal{words: fmt.Sprintf("cannot reach boxsnap at %s: %v", redact(base), err)}
}

func notJSON(base string) *refusal {
	return &refusal{words: fmt.Sprintf("boxsnap at %s answered something that is not its API's JSON", redact(base))}
}

func unreadableListing() *refusal {
	return &refusal{words: "boxsnap answered a listing the CLI cannot read"}
}

// errorAnswer is an error answer's refusal: the API's words, and that it
// holds only for now where the API says so; else the status.
func errorAnswer(base, status string, raw []byte) *refusal {
	var ae wire.ErrorBody
	if json.Unmarshal(raw, &ae) == nil && ae.Error.Message != "" {
		w := ae.Error.Message
		if ae.Error.TryAgain {
			w += " (This holds only for now: try again later.)"
		}
		return &refusal{words: w}
	}
	return &refusal{words: fmt.Sprintf("boxsnap at %s answered %s", redact(base), status)}
}

// redact drops any user and password from an address before it is shown.
func redact(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return "the configured server"
	}
	u.User = nil
	return u.String()
}

// seg escapes one path segment: a snapshot's name may hold spaces and
// slashes.
func seg(s string) string { return url.PathEscape(s) }

func trimURL(s string) string { return strings.TrimRight(s, "/") }
