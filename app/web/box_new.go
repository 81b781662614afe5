package web

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// newBoxForm is the Machines tab's "New box" form: where a box is made and
// whose it is: the owner acquires boxes through the pages too.
type newBoxForm struct {
	Backends []option
	Kinds    []option
	Threads  []option
	// Templates are the owner's box templates, offered by name (a Docker
	// template names an image).
	Templates []option
	Error     string
}

type option struct {
	Value, Label string
}

// boxKinds are the kinds a person can ask for; the backend refuses a kind
// it does not have, in words.
var boxKinds = []option{
	{"linux", "Linux (a folder on this host)"}, {"linux-desktop", "Linux desktop"},
	{"lxc", "Proxmox LXC"}, {"qemu", "Proxmox QEMU, Linux"}, {"qemu-windows", "Proxmox QEMU, Windows"},
}

func (s *Server) newBoxForm(r *http.Request) newBoxForm {
	f := newBoxForm{Kinds: boxKinds}
	for _, b := range s.opts.Core.Backends() {
		f.Backends = append(f.Backends, option{b.ID, b.Label})
	}
	if ts, err := s.boxes.Templates(r.Context()); err == nil {
		for _, t := range ts {
			f.Templates = append(f.Templates, option{t.Name, t.Name + " · " + t.Backend + ", " + t.Source})
		}
	}
	f.Threads = []option{{"", "Your machine"}}
	if threads, err := s.boxes.Threads(r.Context(), snapshots.Owner()); err == nil {
		for _, t := range threads {
			if t.EndedAt == nil {
				f.Threads = append(f.Threads, option{t.ID, t.Title})
			}
		}
	}
	return f
}

// newBox makes a box on a backend: a folder on the local backend, a clone
// of a template or an adopted guest on Proxmox, then opens its page.
func (s *Server) newBox(w http.ResponseWriter, r *http.Request) {
	req := snapshots.BoxRequest{
		Name:     strings.TrimSpace(r.PostFormValue("name")),
		Backend:  r.PostFormValue("backend"),
		Kind:     r.PostFormValue("kind"),
		Thread:   r.PostFormValue("thread"),
		Template: strings.TrimSpace(r.PostFormValue("template")),
		Adopt:    strings.TrimSpace(r.PostFormValue("adopt")),
		Command:  strings.TrimSpace(r.PostFormValue("command")),
	}
	b, err := s.boxes.AcquireBox(r.Context(), snapshots.Owner(), req)
	if err != nil {
		if _, ok := snapshots.AsRefusal(err); !ok {
			// A backend's own words (a template that does not exist, a
			// guest already taken) are the person's to read too.
			s.logger(r).Warn("make box", "err", err)
			err = &snapshots.Refusal{Code: snapshots.CodeBackend, Words: "The box was not made: " + err.Error()}
		}
		s.refused(w, r, err)
		return
	}
	s.done(w, r, "/boxes/"+url.PathEscape(b.Name), "Made "+b.Name+".")
}
