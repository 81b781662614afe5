package pvesim

import "time"

// clockState is the simulator's clock: the real time plus an offset, or a
// frozen time that moves only when a test moves it. Guarded by Sim.mu.
type clockState struct {
	frozen bool
	at     time.Time     // when frozen
	offset time.Duration // when running
}

func newClockState(start time.Time) clockState {
	if start.IsZero() {
		return clockState{}
	}
	return clockState{frozen: true, at: start}
}

func (c *clockState) now() time.Time {
	if c.frozen {
		return c.at
	}
	return time.Now().Add(c.offset)
}

// Now returns the simulator's current time.
func (s *Sim) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clock.now()
}

// Advance moves the simulator's clock forward by d and finishes every task
// that is due by then, in order, as if that time had passed.
func (s *Sim) Advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d < 0 {
		d = 0
	}
	if s.clock.frozen {
		s.clock.at = s.clock.at.Add(d)
	} else {
		s.clock.offset += d
	}
	s.advanceLocked()
}

// SetTime sets the simulator's clock to t (and freezes it there), then
// finishes every task due by t. A time before the current one is refused,
// so task times never run backwards.
func (s *Sim) SetTime(t time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.Before(s.clock.now()) {
		return errorf("pvesim: the simulator's clock does not run backwards (now %s)", s.clock.now().UTC().Format(time.RFC3339))
	}
	s.clock = clockState{frozen: true, at: t}
	s.advanceLocked()
	return nil
}
