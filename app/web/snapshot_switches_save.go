package web

import (
	"net/http"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

// switchNames are the switches' words, for a receipt.
var switchNames = [...]struct{ field, words string }{
	{"agentsMayRestore", "Agents may restore their own boxes"},
	{"agentsMayRestoreMemory", "Agents may restore memory snapshots"},
	{"pictures", "Keep a picture of the screen with each snapshot"},
	{"executionMachineRestores", "Restores of boxes threads run on"},
}

// saveSnapshotSwitches saves the switches at once, on each change: htmx posts the
// switches' form and gets the receipt alone; without script the form's
// own Save switches posts it and the page comes back with the receipt.
func (s *Server) saveSnapshotSwitches(w http.ResponseWriter, r *http.Request) {
	st, err := s.opts.Core.Settings(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	before := map[string]bool{"agentsMayRestore": st.AgentsMayRestore, "agentsMayRestoreMemory": st.AgentsMayRestoreMemory, "pictures": st.Pictures,
		"executionMachineRestores": st.ExecutionMachineRestores}
	// A section's page names the switches it shows ("shown"); a form that
	// names none carries them all.
	shown := map[string]bool{}
	for _, f := range r.PostForm["shown"] {
		shown[f] = true
	}
	on := func(name string) bool {
		if len(shown) > 0 && !shown[name] {
			return before[name]
		}
		return r.PostFormValue(name) == "1"
	}
	st.AgentsMayRestore, st.AgentsMayRestoreMemory, st.Pictures = on("agentsMayRestore"), on("agentsMayRestoreMemory"), on("pictures")
	st.ExecutionMachineRestores = on("executionMachineRestores")
	sec, back := settingsBack(r)
	var changed []string
	for _, sw := range switchNames {
		if before[sw.field] != on(sw.field) {
			state := "off"
			if on(sw.field) {
				state = "on"
			}
			changed = append(changed, sw.words+", "+state)
		}
	}
	receipt := "Saved."
	if len(changed) > 0 {
		receipt = "Saved: " + strings.Join(changed, "; ") + "."
	}
	htmx := r.Header.Get("HX-Request") == "true"
	if err := s.opts.Core.SaveSettings(r.Context(), snapshots.Owner(), st); err != nil {
		if htmx {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusOK) // the words go into the receipt
			_, _ = w.Write([]byte("Not saved: " + pagemodel.RefusalWords(err)))
			return
		}
		s.settingsPage(w, r, statusOf(err), pagemodel.SettingsPage{Settings: st, Section: sec, Error: pagemodel.RefusalWords(err)})
		return
	}
	if htmx {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte(receipt))
		return
	}
	s.done(w, r, back, receipt)
}
