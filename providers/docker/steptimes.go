package docker

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// stepTimes records how long each step of a take took, for one debug line
// at its end: where a take's time and its pause go is read from the log,
// never guessed.
type stepTimes struct {
	mu    sync.Mutex
	last  time.Time
	attrs []slog.Attr
}

func newStepTimes() *stepTimes { return &stepTimes{last: time.Now()} }

// mark records the time since the last mark as the step's.
func (s *stepTimes) mark(step string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attrs = append(s.attrs, slog.Duration(step, time.Since(s.last)))
	s.last = time.Now()
}

// since records the time since start as the step's, for a step that runs
// beside others.
func (s *stepTimes) since(step string, start time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attrs = append(s.attrs, slog.Duration(step, time.Since(start)))
}

// log writes the steps on one debug line.
func (s *stepTimes) log(ctx context.Context, log *slog.Logger, msg string, attrs ...slog.Attr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	log.LogAttrs(ctx, slog.LevelDebug, msg, append(attrs, s.attrs...)...)
}
