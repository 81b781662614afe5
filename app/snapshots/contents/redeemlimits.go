package contents

import (
	"context"
	"io"
	"net/url"
	"time"
)

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

// FetchShared fetches a share code's copy from the share endpoint u of
// another boxsnap (app/remote's, wired by the caller: the core speaks no
// HTTP). answer bounds the wait for the answer, ctx the whole. What went
// wrong is a *RemoteError.
type FetchShared func(ctx context.Context, u *url.URL, code string, answer time.Duration) (*RemoteCopy, error)

// RemoteCopy is the copy as it comes, with the length the other boxsnap
// declared (-1 when none).
type RemoteCopy struct {
	Body   io.ReadCloser
	Length int64
}
