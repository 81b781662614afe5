package pagemodel

import (
	"strings"
	"time"
)

// WhenAt says when in a sentence: "yesterday at 23:39", "today at 10:42",
// "Thu 09:15", "12 Oct".
func WhenAt(t, now time.Time, tz *time.Location) string {
	w := WhenWords(t, now, tz)
	for _, day := range []string{"Today ", "Yesterday "} {
		if rest, ok := strings.CutPrefix(w, day); ok {
			return strings.ToLower(day) + "at " + rest
		}
	}
	return w
}
