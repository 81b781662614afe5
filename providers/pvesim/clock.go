package pvesim

import "time"

// clockState is the simulator's clock: the real time plus an offset, or a
// frozen time that moves only when a test moves it. Guarded by cluster.mu.
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
