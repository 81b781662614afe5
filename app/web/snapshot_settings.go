package web

import (
	"fmt"
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
	"github.com/boxsnap/boxsnap/views"
)

func (s *Server) settingsPage(w http.ResponseWriter, r *http.Request, status int, p pagemodel.SettingsPage) {
	ctx := r.Context()
	p.Title = pagemodel.SectionTitle(p.Section)
	title := "Settings, Snapshots"
	if p.Title != "" {
		title += ", " + p.Title
	}
	p.Page = views.Page{Title: title, SignedIn: true, Nav: "settings", Flash: s.flash(w, r)}
	p.Min.PerBox, p.Max.PerBox = snapshots.MinPerBox, snapshots.MaxPerBox
	p.Min.Room, p.Max.Room = snapshots.MinRoomPercent, snapshots.MaxRoomPercent
	p.Min.Keep, p.Max.Keep = 1, snapshots.MaxKeepDays
	p.Min.Approval, p.Max.Approval = 1, snapshots.MaxApprovalMinutes
	p.Min.Share, p.Max.Share = 1, snapshots.MaxShareDays
	p.Max.Trash = snapshots.MaxTrashHours
	boxes, _ := s.boxes.List(ctx, snapshots.Owner())
	p.NoDocker, p.NoQEMU = true, true
	p.NotRun = pagemodel.NotRunBackends
	for _, be := range s.opts.Core.Backends() {
		switch be.Kind {
		case "docker":
			p.NoDocker = false
		case "qemu":
			p.NoQEMU = false
		}
	}
	p.Summary = fmt.Sprintf("%d per box · kept %d days", p.Settings.PerBox, p.Settings.KeepDays)
	rates, _ := s.opts.Core.PaidRates(ctx)
	autoNow, err := s.opts.BoxViews.AutomaticNowByBackend(ctx)
	if err != nil {
		s.logger(r).Warn("the boxes' automatic history", "err", err)
	}
	for _, be := range s.opts.Core.Backends() {
		c := s.opts.Core.OwnCadence(be)
		every := int(p.Settings.CheckEvery(be).Seconds())
		row := pagemodel.HistoryRow{ID: be.ID, Label: be.Label, On: p.Settings.AutomaticOn(be),
			Every: every, Why: fmt.Sprintf("Its own is every %s: %s.", pagemodel.EveryWords(int(c.Every.Seconds())), c.Why)}
		if err == nil {
			row.Now = AutomaticNowWords(autoNow[be.ID], every)
		}
		p.History = append(p.History, row)
	}
	ceilings, summary := pagemodel.CeilingsOf(s.opts.Core.Backends(), rates, boxes, p.Settings)
	p.Ceilings = append(p.Ceilings, ceilings...)
	p.Summary += summary
	// One row per backend and kind (and host, with its storage), each read
	// from a plan through a live box there where there is one.
	for _, kp := range s.rows.KindPlans(ctx, boxes) {
		p.Offers = append(p.Offers, pagemodel.OfferOf(kp, p.Settings.RoomPercent))
	}
	p.Sections = pagemodel.SectionsOf(p)
	s.render(w, r, status, "settings_snapshots", p)
}

// settingsBack is where a settings form goes back to: its section's page,
// or the index for a form that names none.
func settingsBack(r *http.Request) (string, string) {
	sec := r.PostFormValue("section")
	if pagemodel.SectionTitle(sec) == "" {
		return "", "/settings/snapshots"
	}
	return sec, "/settings/snapshots/" + sec
}

func (s *Server) showSnapshotSettings(w http.ResponseWriter, r *http.Request) {
	st, err := s.opts.Core.Settings(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.settingsPage(w, r, http.StatusOK, pagemodel.SettingsPage{Settings: st})
}
