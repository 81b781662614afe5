package fork

import (
	"context"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// nameTakenWords say why a fork whose new box could not be recorded was
// not made when a box took its name after the fork was admitted (names are
// checked at admission, and the box is recorded when the fork runs): as
// NameFree tells caller c, so another thread's box is never said to hold
// it. "" when no box holds the name, and the failure was another.
func (s *Forks) nameTakenWords(ctx context.Context, c snapshots.Caller, name string) string {
	if r, ok := snapshots.AsRefusal(s.NameFree(ctx, c, name)); ok {
		return r.Words
	}
	return ""
}
