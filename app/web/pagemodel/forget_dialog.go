package pagemodel

import (
	"fmt"
	"net/url"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
)

// GoneBackend is the Snapshots tab's notice for a backend no longer in
// settings whose snapshots are still recorded: they are unavailable, and
// the person may forget them.
type GoneBackend struct {
	Words, Href string
}

// ForgetDialog is "Forget its snapshots": it names them, their size and
// price, and says they may still exist and be billed.
func (dlg *DialogBuilder) ForgetDialog(r Request, backend string) (Dialog, error) {
	d := Dialog{Kind: "forget", Title: fmt.Sprintf("Forget the snapshots of %s?", backend), Back: backOf(r, ""),
		Action: "/backends/" + url.PathEscape(backend) + "/forget", Submit: "Forget its snapshots", Danger: true}
	if d.Back == "/boxes/" {
		d.Back = "/boxes/snapshots"
	}
	p, err := dlg.boxes.ForgetBackendPlan(r.Context(), snapshots.Owner(), backend)
	if err != nil {
		return d, err
	}
	d.Lines = []string{p.Words}
	d.Items = p.Lines
	d.Fingerprint = fingerprintForget(p)
	return d, nil
}

func fingerprintForget(p *boxes.ForgetPlan) string {
	ids := make([]string, 0, len(p.Snapshots))
	for _, sn := range p.Snapshots {
		ids = append(ids, sn.ID)
	}
	return fingerprint(&snapshots.Box{ID: p.Backend}, nil, ids)
}
