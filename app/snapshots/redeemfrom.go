package snapshots

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// SharedEndpoint is the path of the API route that hands out a share
// code's copy (POST, the code in the body). A redeem from another boxsnap
// calls it there and nothing else.
const SharedEndpoint = "/api/v1/shared"

// RedeemLimits bound a redeem from another boxsnap.
type RedeemLimits struct {
	// Answer is how long the other boxsnap has to take the connection and
	// answer the request's headers.
	Answer time.Duration
	// Idle is the longest the copy may pause while it comes.
	Idle time.Duration
	// Total is the longest the whole copy may take.
	Total time.Duration
	// MaxBytes is the largest copy taken.
	MaxBytes int64
}

// DefaultRedeemLimits: 30 s to answer, a minute's pause at most, an hour
// and 64 GiB in all (the import's own cap).
var DefaultRedeemLimits = RedeemLimits{Answer: 30 * time.Second, Idle: time.Minute, Total: time.Hour, MaxBytes: 64 << 30}

func (l RedeemLimits) orDefault() RedeemLimits {
	d := DefaultRedeemLimits
	if l.Answer > 0 {
		d.Answer = l.Answer
	}
	if l.Idle > 0 {
		d.Idle = l.Idle
	}
	if l.Total > 0 {
		d.Total = l.Total
	}
	if l.MaxBytes > 0 {
		d.MaxBytes = l.MaxBytes
	}
	return d
}

// RemoteShareURL is the share endpoint of the boxsnap at address: the
// scheme (https when none is given), the host and its port as typed, and
// boxsnap's own path (SharedEndpoint). A path, query or fragment typed
// after the host is not used; a name or password in it is refused.
func RemoteShareURL(address string) (*url.URL, error) {
	address = strings.TrimSpace(address)
	if address == "" {
		return nil, refusal(CodeInvalid, wordsRemoteAddress)
	}
	if !strings.Contains(address, "://") {
		address = "https://" + address
	}
	u, err := url.Parse(address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, refusal(CodeInvalid, wordsRemoteAddress)
	}
	if u.User != nil {
		return nil, refusal(CodeInvalid, wordsRemoteNoSecrets)
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host, Path: SharedEndpoint}, nil
}

var errCopyTooBig = errors.New("the copy is over the cap")

// watchedBody is the copy as it comes: over MaxBytes it stops, and a pause
// longer than Idle ends the request (stalled is then set).
type watchedBody struct {
	r       io.Reader
	timer   *time.Timer
	idle    time.Duration
	n, max  int64
	over    bool
	stalled atomic.Bool
}

func (w *watchedBody) Read(p []byte) (int, error) {
	w.timer.Reset(w.idle)
	n, err := w.r.Read(p)
	w.n += int64(n)
	if w.n > w.max {
		w.over = true
		return n, errCopyTooBig
	}
	return n, err
}

// RedeemFrom redeems a share code of another boxsnap, at address: boxsnap
// calls that boxsnap's share endpoint (RemoteShareURL), follows no
// redirect, waits no longer than the limits, takes no more than MaxBytes,
// and imports the copy here as Import does. A refusal there is said in
// boxsnap's own words, never the other's.
func (s *Contents) RedeemFrom(ctx context.Context, c Caller, address, code string) (*ImportResult, error) {
	if err := MayAct(c, ActShare, nil, nil); err != nil {
		return nil, err
	}
	code = strings.TrimSpace(code)
	if !strings.HasPrefix(code, SharePrefix) || len(code) != len(SharePrefix)+43 {
		return nil, refusal(CodeInvalid, wordsNotAShareCode(SharePrefix, len(SharePrefix)+43))
	}
	u, err := RemoteShareURL(address)
	if err != nil {
		return nil, err
	}
	l, host := s.redeem, u.Host
	ctx, cancel := context.WithTimeout(ctx, l.Total)
	defer cancel()
	client := &http.Client{
		Transport: &http.Transport{
			DialContext:            (&net.Dialer{Timeout: l.Answer}).DialContext,
			TLSHandshakeTimeout:    l.Answer,
			ResponseHeaderTimeout:  l.Answer,
			MaxResponseHeaderBytes: 64 << 10,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	body, _ := json.Marshal(map[string]string{"code": code})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(string(body)))
	if err != nil {
		return nil, refusal(CodeInvalid, wordsRemoteAddress)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, &Refusal{Code: CodeUnreachable, Words: wordsRemoteSlow(host, l.Answer), TryAgain: true}
		}
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, &Refusal{Code: CodeUnreachable, Words: wordsRemoteSlow(host, l.Total), TryAgain: true}
		}
		return nil, &Refusal{Code: CodeUnreachable, Words: wordsRemoteUnreachable(host), TryAgain: true}
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return nil, refusal(CodeInvalid, wordsRemoteRedirect(host))
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return nil, refusal(CodeNotFound, wordsRemoteNoCode(host))
	case resp.StatusCode != http.StatusOK:
		return nil, refusal(CodeInvalid, wordsRemoteRefused(host))
	}
	if resp.ContentLength > l.MaxBytes {
		return nil, refusal(CodeInvalid, wordsRemoteTooBig(host, l.MaxBytes))
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-tar") {
		return nil, refusal(CodeInvalid, wordsRemoteNotBoxsnap(host))
	}
	wb := &watchedBody{r: resp.Body, idle: l.Idle, max: l.MaxBytes}
	wb.timer = time.AfterFunc(l.Idle, func() { wb.stalled.Store(true); cancel() })
	defer wb.timer.Stop()
	st, err := s.Stage(ctx, fmt.Sprintf("the copy from %s", host), wb)
	wb.timer.Stop()
	switch {
	case wb.over:
		if err == nil {
			st.Remove()
		}
		return nil, refusal(CodeInvalid, wordsRemoteTooBig(host, l.MaxBytes))
	case wb.stalled.Load():
		if err == nil {
			st.Remove()
		}
		return nil, &Refusal{Code: CodeUnreachable, Words: wordsRemoteSlow(host, l.Idle), TryAgain: true}
	case err != nil:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, &Refusal{Code: CodeUnreachable, Words: wordsRemoteSlow(host, l.Total), TryAgain: true}
		}
		return nil, err
	}
	defer st.Remove()
	return s.Import(ctx, c, []*Staged{st})
}
