package web

import (
	"net/http"
	"sort"

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
	list, err := s.boxes.Templates(r.Context())
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
