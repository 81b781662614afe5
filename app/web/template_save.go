package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

// saveTemplate adds or changes a box template from the form; a wrong field
// is refused in words, with the form as it was sent.
func (s *Server) saveTemplate(w http.ResponseWriter, r *http.Request) {
	t := snapshots.BoxTemplate{
		Name: strings.TrimSpace(r.PostFormValue("name")), Backend: r.PostFormValue("backend"),
		Kind: strings.TrimSpace(r.PostFormValue("kind")), Source: strings.TrimSpace(r.PostFormValue("source")),
		Command: strings.TrimSpace(r.PostFormValue("command")), User: strings.TrimSpace(r.PostFormValue("user")),
		Env: map[string]string{},
	}
	var bad []string
	for _, line := range strings.Split(r.PostFormValue("env"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			bad = append(bad, "Each line of the environment is NAME=value.")
			break
		}
		t.Env[strings.TrimSpace(k)] = v
	}
	num := func(field, words string, scale int64) int64 {
		v := strings.TrimSpace(r.PostFormValue(field))
		if v == "" {
			return 0
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > 1<<40/scale {
			bad = append(bad, words)
			return 0
		}
		return n * scale
	}
	t.Limits.MemoryBytes = num("memoryMiB", "Memory is a whole number of MiB.", 1<<20)
	t.Limits.Processes = int(num("processes", "Processes is a whole number.", 1))
	t.Limits.OpenFiles = int(num("openFiles", "Open files is a whole number.", 1))
	if r.PostFormValue("networkSet") != "" {
		t.NoNetwork = r.PostFormValue("network") == ""
	}
	t.Limits.DiskBytes = num("diskMiB", "Disk is a whole number of MiB.", 1<<20)
	err := error(nil)
	if len(bad) > 0 {
		err = &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: strings.Join(bad, " ")}
	} else {
		err = s.boxes.SaveTemplate(r.Context(), snapshots.Owner(), t)
	}
	if err != nil {
		if _, ok := snapshots.AsRefusal(err); !ok {
			s.fail(w, r, err)
			return
		}
		s.templatesPage(w, r, statusOf(err), templatesPage{Form: t, Error: pagemodel.RefusalWords(err)})
		return
	}
	s.done(w, r, "/settings/templates", snapshots.TemplateSavedWords(t.Name))
}
