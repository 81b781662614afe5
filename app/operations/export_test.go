package operations

import "time"

// SetWaitRecheck sets how long the engine's waits trust the notification
// alone; a test that sets it past its own bound knows a wait that ended
// heard its end.
func (e *Engine) SetWaitRecheck(d time.Duration) { e.recheck = d }
