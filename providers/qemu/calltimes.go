package qemu

import (
	"context"
	"log/slog"
	"time"
)

// callTimes records how long each call of one restore step took (a libvirt
// call, or a read of the disk's header), for one debug line at the step's
// end: where a restore's time goes is read from the log (bench/qemu
// -steps), never guessed.
type callTimes struct {
	last  time.Time
	attrs []slog.Attr
}

func newCallTimes() *callTimes { return &callTimes{last: time.Now()} }

// mark records the time since the last mark as the call's.
func (c *callTimes) mark(call string) {
	now := time.Now()
	c.attrs = append(c.attrs, slog.Duration(call, now.Sub(c.last)))
	c.last = now
}

// log writes the calls on one debug line, when the logger writes debug
// lines.
func (c *callTimes) log(ctx context.Context, log *slog.Logger, msg string, attrs ...slog.Attr) {
	log.LogAttrs(ctx, slog.LevelDebug, msg, append(attrs, c.attrs...)...)
}
