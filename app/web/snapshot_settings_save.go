package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

// saveSnapshotSettings saves the numbers, drafts until Save, where
// switches save at once. The
// switches are left as they are: they saved when they changed.
func (s *Server) saveSnapshotSettings(w http.ResponseWriter, r *http.Request) {
	st, err := s.opts.Core.Settings(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	num := func(name string, into *int) {
		if v, err := strconv.Atoi(strings.TrimSpace(r.PostFormValue(name))); err == nil {
			*into = v
		} else {
			*into = -1
		}
	}
	// Each section's page posts its own numbers; one it does not show is
	// left as it is.
	for name, into := range map[string]*int{"perBox": &st.PerBox, "roomPercent": &st.RoomPercent, "keepDays": &st.KeepDays} {
		if _, ok := r.PostForm[name]; ok {
			num(name, into)
		}
	}
	if _, ok := r.PostForm["historyDays"]; ok {
		num("historyDays", &st.HistoryDays)
		num("historyGiB", &st.HistoryGiB)
	}
	for _, be := range s.opts.Core.Backends() {
		switch r.PostFormValue("automatic-" + be.ID) {
		case "on", "off":
			if st.Automatic == nil {
				st.Automatic = map[string]bool{}
			}
			st.Automatic[be.ID] = r.PostFormValue("automatic-"+be.ID) == "on"
		}
		v := strings.TrimSpace(r.PostFormValue("check-" + be.ID))
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			n = -1
		}
		if n == int(s.opts.Core.OwnCadence(be).Every.Seconds()) {
			delete(st.CheckSeconds, be.ID) // its own cadence
			continue
		}
		if st.CheckSeconds == nil {
			st.CheckSeconds = map[string]int{}
		}
		st.CheckSeconds[be.ID] = n
	}
	if _, ok := r.PostForm["shareDays"]; ok {
		num("shareDays", &st.ShareDays)
	}
	if _, ok := r.PostForm["approvalMinutes"]; ok {
		num("approvalMinutes", &st.ApprovalMinutes)
	}
	if _, ok := r.PostForm["trashHours"]; ok {
		num("trashHours", &st.TrashHours)
	}
	if _, ok := r.PostForm["keepLogins"]; ok {
		st.KeepLogins = nil
		for _, line := range strings.Split(r.PostFormValue("keepLogins"), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				st.KeepLogins = append(st.KeepLogins, line)
			}
		}
	}
	if _, ok := r.PostForm["alsoRemove"]; ok {
		st.AlsoRemove = nil
		for _, line := range strings.Split(r.PostFormValue("alsoRemove"), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				st.AlsoRemove = append(st.AlsoRemove, line)
			}
		}
	}
	for _, be := range s.opts.Core.Backends() {
		v := strings.TrimSpace(r.PostFormValue("ceiling-" + be.ID))
		if v == "" {
			continue
		}
		c, err := strconv.ParseFloat(strings.TrimPrefix(v, "$"), 64)
		if err != nil || !finite(c) {
			c = -1
		}
		if st.Ceilings == nil {
			st.Ceilings = map[string]float64{}
		}
		st.Ceilings[be.ID] = c
	}
	sec, back := settingsBack(r)
	if err := s.opts.Core.SaveSettings(r.Context(), snapshots.Owner(), st); err != nil {
		s.settingsPage(w, r, statusOf(err), pagemodel.SettingsPage{Settings: st, Section: sec, Error: pagemodel.RefusalWords(err)})
		return
	}
	s.done(w, r, back, "Saved.")
}
