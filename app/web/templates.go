package web

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/views"
)

// templatesPage is Settings, Box templates: what agents may make boxes from.
type templatesPage struct {
	Page      views.Page
	Templates []snapshots.BoxTemplate
	Backends  []option
	Form      snapshots.BoxTemplate
	EnvText   string
	MemoryMiB int64
	DiskMiB   int64
	Error     string
	None      string // what the page says with no box template
}

func (s *Server) templatesPage(w http.ResponseWriter, r *http.Request, status int, p templatesPage) {
	list, err := s.opts.Core.Boxes().Templates(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p.Page = views.Page{Title: "Box templates", SignedIn: true, Nav: "templates", Flash: s.flash(w, r)}
	p.Templates, p.None = list, snapshots.NoTemplatesWords
	for _, b := range s.opts.Core.Backends() {
		p.Backends = append(p.Backends, option{b.ID, b.Label})
	}
	if p.Form.Kind == "" {
		p.Form.Kind = "linux"
	}
	p.MemoryMiB = p.Form.Limits.MemoryBytes >> 20
	p.DiskMiB = p.Form.Limits.DiskBytes >> 20
	keys := make([]string, 0, len(p.Form.Env))
	for k := range p.Form.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p.EnvText += k + "=" + p.Form.Env[k] + "\n"
	}
	s.render(w, r, status, "settings_templates", p)
}

func (s *Server) showTemplates(w http.ResponseWriter, r *http.Request) {
	s.templatesPage(w, r, http.StatusOK, templatesPage{})
}

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
		err = s.opts.Core.Boxes().SaveTemplate(r.Context(), snapshots.Owner(), t)
	}
	if err != nil {
		if _, ok := snapshots.AsRefusal(err); !ok {
			s.fail(w, r, err)
			return
		}
		s.templatesPage(w, r, statusOf(err), templatesPage{Form: t, Error: refusalWords(err)})
		return
	}
	s.done(w, r, "/settings/templates", snapshots.TemplateSavedWords(t.Name))
}

// deleteTemplate removes a box template; its boxes stay.
func (s *Server) deleteTemplate(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	if err := s.opts.Core.Boxes().DeleteTemplate(r.Context(), snapshots.Owner(), name); err != nil {
		s.refused(w, r, err)
		return
	}
	s.done(w, r, "/settings/templates", snapshots.TemplateRemovedWords(name))
}
