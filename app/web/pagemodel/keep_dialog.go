package pagemodel

import (
	"fmt"
	"net/url"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/keep"
	"github.com/boxsnap/boxsnap/providers"
)

// DateForm is the HTML date input's layout.
const DateForm = "2006-01-02"

// KeepDialog builds Keep…: the date (the setting's days by default) and
// what keeping costs on that backend.
func (dlg *DialogBuilder) KeepDialog(r Request, boxRef, ref string) (Dialog, error) {
	ctx := r.Context()
	b, sn, plan, err := dlg.core.Plan(ctx, snapshots.Owner(), boxRef, ref)
	if b == nil || sn == nil {
		if err == nil {
			err = fmt.Errorf("keep dialog: no snapshot %s", ref)
		}
		return Dialog{}, err
	}
	now := time.Now()
	tz := dlg.core.TimeZone(ctx)
	settings, _ := dlg.core.Settings(ctx)
	d := Dialog{Kind: "keep", Title: fmt.Sprintf("Keep ‘%s’", sn.Name), Back: backOf(r, b.Name), Submit: "Keep",
		Action: fmt.Sprintf("/boxes/%s/snapshots/%s/keep", url.PathEscape(b.Name), sn.ID), Fingerprint: fingerprint(b, sn, nil)}
	until, _ := keep.KeepUntil(now, sn.KeptUntil, settings.KeepDays, nil)
	d.Until = until.Format(DateForm)
	d.UntilWords = until.Format("Mon 2 Jan 2006")
	d.MinDate = now.UTC().Format(DateForm)
	d.MaxDate = now.UTC().AddDate(0, 0, snapshots.MaxKeepDays).Format(DateForm)
	if sn.KeptUntil != nil {
		d.Lines = append(d.Lines, fmt.Sprintf("You keep it until %s. Choose a later date to keep it longer.", sn.KeptUntil.In(tz).Format("2 Jan")))
	}
	d.Lines = append(d.Lines, fmt.Sprintf("A kept snapshot is yours: no agent deletes it, and it outlives %s's release, to be forked.", b.Name))
	if list, lerr := dlg.core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: b.ID}); lerr == nil && len(list) > 0 {
		if werr := snapshots.Eligible(sn, snapshots.ChangeKeep, list[0].Pins[sn.ID], now, tz); werr != nil {
			d.Disabled, d.Error = true, RefusalWords(werr)
			return d, nil
		}
	}
	if err != nil {
		d.Lines = append(d.Lines, "boxsnap could not read what keeping costs now: "+RefusalWords(err))
		return d, nil
	}
	// A keep ends with its UTC day, the day in the field: the words say
	// that day, not the local one it may end in.
	date := until.UTC().Format("2 Jan")
	switch plan.Keep.Way {
	case providers.KeepsHeldCopy:
		w := fmt.Sprintf("If %s is released, boxsnap first copies this snapshot in full into a copy that cannot start", b.Name)
		if plan.Keep.About != nil {
			w += ": " + lowerFirst(aboutWords(*plan.Keep.About))
		}
		if plan.Keep.Bytes != nil {
			w += fmt.Sprintf(", and %s %s until %s", snapshots.GB(*plan.Keep.Bytes), dlg.rows.WhereWords(b), date)
		}
		d.Lines = append(d.Lines, w+".")
	case providers.KeepsAsIs:
		w := fmt.Sprintf("It stays as it is %s after a release", dlg.rows.WhereWords(b))
		if plan.Keep.Bytes != nil {
			w += fmt.Sprintf(", taking up to %s until %s", snapshots.GB(*plan.Keep.Bytes), date)
		} else if sn.SizeBytes != nil {
			w += fmt.Sprintf(", taking up to %s until %s", snapshots.GB(*sn.SizeBytes), date)
		}
		d.Lines = append(d.Lines, w+".")
	case providers.KeepsNo:
		d.Disabled, d.Error = true, plan.Keep.Why
		if d.Error == "" {
			d.Error = snapshots.CannotBeKeptWords(b.Name)
		}
	}
	d.Lines = append(d.Lines, CostsWords(plan.Keep.Price, " until then"))
	if plan.Keep.Why != "" && !d.Disabled {
		d.Lines = append(d.Lines, plan.Keep.Why)
	}
	return d, nil
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]|0x20) + s[1:]
}
