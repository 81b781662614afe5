package pictures

import (
	_ "image/png" // screenshots are PNG
	"time"
)

func timeUntil(t time.Time) time.Duration { return time.Until(t) }
