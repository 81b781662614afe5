package pagemodel

import (
	"fmt"
	"net/url"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// DeleteHistoryDialog is Delete history…: every automatic snapshot of the
// box goes once its name is typed; saved and kept ones stay.
func (dlg *DialogBuilder) DeleteHistoryDialog(r Request, boxRef, _ string) (Dialog, error) {
	ctx := r.Context()
	b, err := dlg.core.Box(ctx, snapshots.Owner(), boxRef)
	if err != nil {
		return Dialog{}, err
	}
	hist, err := dlg.boxes.BoxHistorySettings(ctx, snapshots.Owner(), b.ID)
	if err != nil {
		return Dialog{}, err
	}
	d := Dialog{Kind: "delete-history", Title: fmt.Sprintf("Delete %s's history?", b.Name), Back: backOf(r, b.Name),
		Submit: "Delete history", Danger: true, Action: "/boxes/" + url.PathEscape(b.Name) + "/history/delete",
		Fingerprint: fmt.Sprintf("%s:%d", b.ID, hist.Count), NamePlaceholder: b.Name}
	d.Lines = append(d.Lines,
		fmt.Sprintf("Deletes %s of %s. They cannot come back.", Plural(hist.Count, "automatic snapshot", "automatic snapshots"), b.Name),
		"Saved and kept snapshots stay, and so does one a restore or another operation uses now.",
		fmt.Sprintf("Type %s to confirm.", b.Name))
	if hist.Count == 0 {
		d.Disabled, d.Error = true, NoAutomaticWords(b.Name)
	}
	return d, nil
}
