package contents

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// SharedEndpoint is the path of the API route that hands out a share
// code's copy (POST, the code in the body). A redeem from another boxsnap
// calls it there and nothing else.
const SharedEndpoint = "/api/v1/shared"

// RemoteShareURL is the share endpoint of the boxsnap at address: the
// scheme (https when none is given), the host and its port as typed, and
// boxsnap's own path (SharedEndpoint). A path, query or fragment typed
// after the host is not used; a name or password in it is refused.
func RemoteShareURL(address string) (*url.URL, error) {
	address = strings.TrimSpace(address)
	if address == "" {
		return nil, refusal(snapshots.CodeInvalid, remoteAddressWords)
	}
	if !strings.Contains(address, "://") {
		address = "https://" + address
	}
	u, err := url.Parse(address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, refusal(snapshots.CodeInvalid, remoteAddressWords)
	}
	if u.User != nil {
		return nil, refusal(snapshots.CodeInvalid, remoteNoSecretsWords)
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host, Path: SharedEndpoint}, nil
}

// RemoteFault is what went wrong when fetching from another boxsnap.
type RemoteFault int

// The faults a fetch from another boxsnap answers.
const (
	RemoteUnreachable RemoteFault = iota + 1 // no connection, or it broke
	RemoteSlowAnswer                         // no answer within the answer bound
	RemoteSlowTotal                          // the whole took longer than allowed
	RemoteRedirect                           // it answered a redirect, never followed
	RemoteNoCode                             // it knows no live code like that
	RemoteRefused                            // any other answer than the copy
	RemoteNotBoxsnap                         // the answer is not a boxsnap copy
	RemoteBadAddress                         // no request could be made to it
)

// RemoteError is a fetch's fault.
type RemoteError struct{ Fault RemoteFault }

func (e *RemoteError) Error() string {
	return fmt.Sprintf("fetch from another boxsnap: fault %d", e.Fault)
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
func (s *Contents) RedeemFrom(ctx context.Context, c snapshots.Caller, address, code string) (*ImportResult, error) {
	if err := snapshots.MayAct(c, snapshots.ActShare, nil, nil); err != nil {
		return nil, err
	}
	code = strings.TrimSpace(code)
	if !strings.HasPrefix(code, SharePrefix) || len(code) != len(SharePrefix)+43 {
		return nil, refusal(snapshots.CodeInvalid, notAShareCodeWords(SharePrefix, len(SharePrefix)+43))
	}
	u, err := RemoteShareURL(address)
	if err != nil {
		return nil, err
	}
	l, host := s.redeem, u.Host
	if s.fetchShared == nil {
		return nil, refusal(snapshots.CodeInvalid, remoteNotSetUpWords)
	}
	ctx, cancel := context.WithTimeout(ctx, l.Total)
	defer cancel()
	resp, err := s.fetchShared(ctx, u, code, l.Answer)
	if err != nil {
		var re *RemoteError
		if !errors.As(err, &re) {
			return nil, &snapshots.Refusal{Code: snapshots.CodeUnreachable, Words: remoteUnreachableWords(host), TryAgain: true}
		}
		switch re.Fault {
		case RemoteSlowAnswer:
			return nil, &snapshots.Refusal{Code: snapshots.CodeUnreachable, Words: remoteSlowWords(host, l.Answer), TryAgain: true}
		case RemoteSlowTotal:
			return nil, &snapshots.Refusal{Code: snapshots.CodeUnreachable, Words: remoteSlowWords(host, l.Total), TryAgain: true}
		case RemoteRedirect:
			return nil, refusal(snapshots.CodeInvalid, remoteRedirectWords(host))
		case RemoteNoCode:
			return nil, refusal(snapshots.CodeNotFound, remoteNoCodeWords(host))
		case RemoteRefused:
			return nil, refusal(snapshots.CodeInvalid, remoteRefusedWords(host))
		case RemoteNotBoxsnap:
			return nil, refusal(snapshots.CodeInvalid, remoteNotBoxsnapWords(host))
		case RemoteBadAddress:
			return nil, refusal(snapshots.CodeInvalid, remoteAddressWords)
		}
		return nil, &snapshots.Refusal{Code: snapshots.CodeUnreachable, Words: remoteUnreachableWords(host), TryAgain: true}
	}
	defer resp.Body.Close()
	if resp.Length > l.MaxBytes {
		return nil, refusal(snapshots.CodeInvalid, remoteTooBigWords(host, l.MaxBytes))
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
		return nil, refusal(snapshots.CodeInvalid, remoteTooBigWords(host, l.MaxBytes))
	case wb.stalled.Load():
		if err == nil {
			st.Remove()
		}
		return nil, &snapshots.Refusal{Code: snapshots.CodeUnreachable, Words: remoteSlowWords(host, l.Idle), TryAgain: true}
	case err != nil:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, &snapshots.Refusal{Code: snapshots.CodeUnreachable, Words: remoteSlowWords(host, l.Total), TryAgain: true}
		}
		return nil, err
	}
	defer st.Remove()
	return s.Import(ctx, c, []*Staged{st})
}
