// Package remote fetches a share code's copy from another boxsnap over
// HTTP, for the core's redeem (contents.Contents.RedeemFrom), which speaks
// no HTTP itself: it calls that boxsnap's share endpoint only, follows no
// redirect, waits no longer than it is told for the answer, and says what
// went wrong as a contents.RemoteFault, never in the other's words.
package remote

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots/contents"
)

// FetchShared posts code to the share endpoint u and answers the copy as it
// comes, with the length the other boxsnap declared (-1 when none). answer
// bounds the connection, the TLS handshake and the wait for the answer's
// headers; ctx bounds the whole.
func FetchShared(ctx context.Context, u *url.URL, code string, answer time.Duration) (*contents.RemoteCopy, error) {
	client := &http.Client{
		Transport: &http.Transport{
			DialContext:            (&net.Dialer{Timeout: answer}).DialContext,
			TLSHandshakeTimeout:    answer,
			ResponseHeaderTimeout:  answer,
			MaxResponseHeaderBytes: 64 << 10,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	body, _ := json.Marshal(map[string]string{"code": code})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(string(body)))
	if err != nil {
		client.CloseIdleConnections()
		return nil, &contents.RemoteError{Fault: contents.RemoteBadAddress}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		client.CloseIdleConnections()
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			return nil, &contents.RemoteError{Fault: contents.RemoteSlowAnswer}
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, &contents.RemoteError{Fault: contents.RemoteSlowTotal}
		}
		return nil, &contents.RemoteError{Fault: contents.RemoteUnreachable}
	}
	fault := contents.RemoteFault(0)
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		fault = contents.RemoteRedirect
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		fault = contents.RemoteNoCode
	case resp.StatusCode != http.StatusOK:
		fault = contents.RemoteRefused
	case !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-tar"):
		fault = contents.RemoteNotBoxsnap
	}
	if fault != 0 {
		resp.Body.Close()
		client.CloseIdleConnections()
		return nil, &contents.RemoteError{Fault: fault}
	}
	return &contents.RemoteCopy{Body: &closing{resp.Body, client}, Length: resp.ContentLength}, nil
}

// closing lets the client's connections go with the body.
type closing struct {
	body   io.ReadCloser
	client *http.Client
}

func (c *closing) Read(p []byte) (int, error) { return c.body.Read(p) }

func (c *closing) Close() error {
	err := c.body.Close()
	c.client.CloseIdleConnections()
	return err
}
