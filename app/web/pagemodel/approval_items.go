package pagemodel

import (
	"fmt"
	"net/url"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// ApprovalItem is one request for the person's word, as the pages show it:
// who asks, for what, the plan it would run, and Approve and Decline.
type ApprovalItem struct {
	ID, Asks, Expires string
	Plan              []string
	Back              string
	// Changes and ChangesHref are the restore dialog's "14 files changed
	// since then" and its list, where the backend can tell.
	Changes, ChangesHref string
}

// ApprovalItems are the requests waiting for the person's word, on box or
// on every box (""), each with what its restore would change.
func (rb *RowBuilder) ApprovalItems(r Request, box, back string) []ApprovalItem {
	list, err := rb.approvals.List(r.Context(), snapshots.Owner(), box)
	if err != nil {
		return nil
	}
	tz := rb.core.TimeZone(r.Context())
	out := make([]ApprovalItem, 0, len(list))
	for _, a := range list {
		it := ApprovalItem{ID: a.ID, Back: back,
			Asks:    snapshots.AsksWords(a.ThreadTitle, a.BoxName, a.SnapshotName),
			Expires: fmt.Sprintf("Asked at %s; it expires at %s with nothing restored.", a.AskedAt.In(tz).Format("15:04"), a.ExpiresAt.In(tz).Format("15:04")),
			Plan:    a.Plan}
		if cmp, err := rb.contents.RestorePreview(r.Context(), snapshots.Owner(), a.Snapshot); err == nil && cmp != nil {
			it.Changes = cmp.Words
			it.ChangesHref = fmt.Sprintf("/boxes/%s/snapshots/%s/compare", url.PathEscape(a.BoxName), a.Snapshot)
		}
		out = append(out, it)
	}
	return out
}
