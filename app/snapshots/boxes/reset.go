package boxes

import (
	"context"

	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// recordMadeFrom remembers what a new box was made from, for its reset:
// the box template by name where it was one, the backend's source and the
// command as they were.
func (s *Boxes) recordMadeFrom(ctx context.Context, boxID, template string, spec providers.BoxSpec) {
	if spec.Adopt != "" {
		return // an adopted guest was made outside boxsnap: it has no template
	}
	if err := s.st.MadeFromInsert(ctx, s.st.Pool, db.MadeFromInsertParams{BoxID: boxID, Template: template, Source: spec.Template, Command: spec.Command}); err != nil {
		s.logger.Warn("record what a box was made from", "box", boxID, "err", err)
	}
	s.recordRun(ctx, boxID, spec)
}
