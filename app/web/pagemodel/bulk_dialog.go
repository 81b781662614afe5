package pagemodel

import (
	"fmt"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/keep"
	"github.com/boxsnap/boxsnap/app/snapshots/plans"
)

// bulkCap bounds one bulk action's snapshots.
const bulkCap = 200

// BulkDialog applies the same checks to each selected snapshot: which are
// skipped and why, and what each of the rest frees or costs.
func (dlg *DialogBuilder) BulkDialog(r Request, act string, ids []string) (Dialog, []BulkItem, error) {
	ctx := r.Context()
	if act != "keep" && act != "delete" && act != "renew" {
		return Dialog{}, nil, &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: "Choose Keep…, Keep 30 more days… or Delete…."}
	}
	if len(ids) == 0 {
		return Dialog{}, nil, &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: "Tick the snapshots first."}
	}
	if len(ids) > bulkCap {
		ids = ids[:bulkCap]
	}
	back := SafeNext(r.FormValue("back"))
	if r.FormValue("back") == "" {
		back = "/boxes/snapshots"
	}
	// The selected snapshots alone, with their boxes and pins.
	picked, err := dlg.rows.tab.Pick(ctx, snapshots.Owner(), ids)
	if err != nil {
		return Dialog{}, nil, err
	}
	tz := dlg.core.TimeZone(ctx)
	now := time.Now()
	settings, _ := dlg.core.Settings(ctx)
	verb := "Delete"
	switch act {
	case "keep":
		verb = "Keep"
	case "renew":
		verb = RenewWords(settings.KeepDays) + " for"
	}
	d := Dialog{Kind: "bulk", Action2: act, Action: "/boxes/snapshots/bulk", Back: back, Danger: act == "delete", Picked: ids}
	var items []BulkItem
	var fp []string
	for _, id := range ids {
		p, ok := picked[id]
		if !ok {
			// Not one the person may see: the core's own words for it.
			if _, _, err := dlg.core.Snapshot(ctx, snapshots.Owner(), id); err != nil {
				d.Skipped = append(d.Skipped, RefusalWords(err))
				continue
			}
			// Made meanwhile: read again with the rest next time.
			d.Skipped = append(d.Skipped, RefusalWords(&snapshots.Refusal{Code: snapshots.CodeConflict, Words: StaleWords}))
			continue
		}
		sn, b := p.Snapshot, p.Box
		change := snapshots.ChangeDelete
		if act != "delete" {
			change = snapshots.ChangeKeep
		}
		werr := snapshots.Eligible(sn, change, p.Pins, now, tz)
		if werr == nil && act == "renew" && !sn.Kept() {
			werr = &snapshots.Refusal{Code: snapshots.CodeConflict, Words: snapshots.RenewNotKeptWords(sn.Name)}
		}
		if werr == nil && act != "delete" {
			// Keep and renewals past the paid ceiling: its words for each.
			if w := dlg.rows.keeps.KeepCeiling(ctx, sn); w != "" {
				werr = &snapshots.Refusal{Code: snapshots.CodeLimit, Words: w}
			}
		}
		if werr != nil {
			d.Skipped = append(d.Skipped, fmt.Sprintf("‘%s’ on %s: %s", sn.Name, b.Name, RefusalWords(werr)))
			fp = append(fp, "skip:"+sn.ID)
			continue
		}
		w := fmt.Sprintf("‘%s’ on %s: ", sn.Name, b.Name)
		if act == "delete" {
			w += lowerFirst(dlg.FreesWords(b, sn))
			if sn.Kept() {
				w += " " + plans.KeptUntilWords(*sn.KeptUntil, tz)
			}
		} else {
			until, _ := keep.KeepUntil(now, sn.KeptUntil, settings.KeepDays, nil)
			w += fmt.Sprintf("kept until %s", until.In(tz).Format("2 Jan"))
			if sn.SizeBytes != nil {
				w += fmt.Sprintf(", %s %s", snapshots.GB(*sn.SizeBytes), dlg.rows.WhereWords(b))
			}
			if p := PriceTag(snapshots.PriceOf(sn.Price)); p != "" {
				w += ", " + p
			} else {
				w += ", no charge"
			}
			w += "."
		}
		d.Items = append(d.Items, w)
		d.IDs = append(d.IDs, sn.ID)
		items = append(items, BulkItem{Sn: sn, Box: b})
		fp = append(fp, sn.ID+":"+sn.State)
	}
	d.Fingerprint = fingerprint(&snapshots.Box{}, nil, nil, fp...)
	d.Title = fmt.Sprintf("%s %s?", verb, Plural(len(d.IDs), "snapshot", "snapshots"))
	d.Submit = fmt.Sprintf("%s %s", verb, Plural(len(d.IDs), "snapshot", "snapshots"))
	if len(d.IDs) == 0 {
		d.Disabled = true
		d.Title = fmt.Sprintf("None of these can be %s", map[string]string{"keep": "kept", "delete": "deleted", "renew": "kept longer"}[act])
	}
	return d, items, nil
}

type BulkItem struct {
	Sn  *snapshots.Snapshot
	Box *snapshots.Box
}
