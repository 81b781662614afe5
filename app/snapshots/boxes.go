package snapshots

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

var boxNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{1,39}$`)

// CheckBoxName refuses a new box's name that breaks the machine rule, in
// words; every path that names a box (acquire, fork, the tools) asks it.
func CheckBoxName(name string) error {
	if !boxNameRE.MatchString(name) {
		return refusal(CodeInvalid, wordsMachineName("A box's name"))
	}
	return nil
}

var (
	nameAdjectives = []string{"amber", "brisk", "calm", "dusky", "eager", "fair", "grey", "hazel", "icy", "jolly", "keen", "lucid", "mellow", "noble", "olive", "quick", "rapid", "sunny", "tidy", "vivid", "warm", "young", "zesty"}
	nameNouns      = []string{"fox", "lake", "ridge", "glade", "wren", "brook", "cedar", "dune", "elm", "fern", "grove", "heron", "isle", "jay", "kite", "lark", "moss", "otter", "pine", "reef", "stone", "vale", "wolf"}
)

func randomBoxName() string {
	b := make([]byte, 2)
	_, _ = rand.Read(b)
	return nameAdjectives[int(b[0])%len(nameAdjectives)] + "-" + nameNouns[int(b[1])%len(nameNouns)]
}

// BoxRequest asks for a new box. An agent gives only Name and Template (a
// box template's name); the person may give the rest instead (MayBox).
type BoxRequest struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Backend string `json:"backend"`
	Host    string `json:"host"`
	// Template is a box template's name; for the person, a name that is no
	// box template's is the backend's own source (a folder's name in the
	// templates folder, a template VMID, an image reference).
	Template string `json:"template"`
	Adopt    string `json:"adopt"`   // an existing guest's reference (a VMID) to adopt
	Command  string `json:"command"` // a process to run in a local box
	// Thread puts the box in a thread (the owner's choice); an agent's box is
	// always its own thread's. Empty for the owner: one of their machines.
	Thread    string `json:"thread"`
	HasScreen bool   `json:"hasScreen"`
	ScreenURL string `json:"screenUrl"`
}

// boxSpecOf reads what req asks of a backend, under MayBox: a box template
// by name, or, for the person only, the parts given.
func (s *Boxes) boxSpecOf(ctx context.Context, c Caller, req *BoxRequest, box providers.BoxIdentity) (providers.BoxSpec, error) {
	if c.Kind == CallerAgent {
		if err := agentBoxFields(*req); err != nil {
			return providers.BoxSpec{}, err
		}
	}
	if req.Template != "" && req.Adopt == "" {
		t, err := s.Template(ctx, req.Template)
		if err == nil {
			if err := MayBox(c, BoxFromTemplate, nil); err != nil {
				return providers.BoxSpec{}, err
			}
			for _, f := range []struct{ name, given, set string }{
				{"backend", req.Backend, t.Backend}, {"kind", req.Kind, t.Kind}, {"command", req.Command, t.Command},
			} {
				if f.given != "" && f.given != f.set {
					return providers.BoxSpec{}, refusal(CodeInvalid, wordsTemplateSets(t.Name, f.name))
				}
			}
			req.Backend, req.Kind, req.Command = t.Backend, t.Kind, t.Command
			if t.HasScreen {
				req.HasScreen, req.ScreenURL = true, t.ScreenURL
			}
			box.Kind = t.Kind
			return t.spec(box, req.Host), nil
		}
		if _, ok := AsRefusal(err); !ok || c.Kind == CallerAgent {
			return providers.BoxSpec{}, err
		}
	}
	act := BoxFromParts
	if req.Adopt != "" {
		act = BoxAdopt
	}
	if err := MayBox(c, act, nil); err != nil {
		return providers.BoxSpec{}, err
	}
	if err := CheckText("A box's command", req.Command); err != nil {
		return providers.BoxSpec{}, err
	}
	for _, f := range []struct{ what, v string }{
		{"A box's kind", req.Kind}, {"A box's host", req.Host}, {"A box's template", req.Template}, {"An adopt reference", req.Adopt},
		{"A box's screen address", req.ScreenURL},
	} {
		if err := CheckLine(f.what, f.v); err != nil {
			return providers.BoxSpec{}, err
		}
	}
	spec := providers.BoxSpec{Box: box, Template: req.Template, Adopt: req.Adopt, Command: req.Command, Host: req.Host}
	if req.HasScreen {
		spec.Publish = screenPorts(req.ScreenURL)
	}
	return spec, nil
}

// AcquireBox makes a box on a backend: a folder on the local backend, a
// clone of a template or an adopted guest on Proxmox. MayBox says who may
// make it from what.
func (s *Boxes) AcquireBox(ctx context.Context, c Caller, req BoxRequest) (*Box, error) {
	var thread *string
	switch {
	case c.Kind == CallerAgent:
		t := c.Thread
		thread = &t
	case c.IsPerson() && req.Thread != "":
		if !ValidID(PrefixThread, req.Thread) {
			return nil, refusal(CodeInvalid, wordsNoThread(req.Thread))
		}
		if _, err := s.thread(ctx, req.Thread); err != nil {
			return nil, err
		}
		thread = &req.Thread
	case !c.IsPerson():
		return nil, refusal(CodeForbidden, wordsNotAllowed)
	}
	if err := CheckLine("A box's name", req.Name); err != nil {
		return nil, err
	}
	id := NewID(PrefixBox)
	name := strings.TrimSpace(req.Name)
	spec, err := s.boxSpecOf(ctx, c, &req, providers.BoxIdentity{ID: id, Name: name, Kind: req.Kind, Install: s.install})
	if err != nil {
		return nil, err
	}
	if req.Backend == "" && len(s.order) > 0 {
		req.Backend = s.order[0]
	}
	b, err := s.Backend(req.Backend)
	if err != nil {
		return nil, err
	}
	if req.Kind == "" {
		req.Kind = "linux"
	}
	if name == "" {
		name = randomBoxName()
		for i := 0; i < 20; i++ {
			if _, err := s.boxByName(ctx, name); errors.Is(err, store.ErrNotFound) {
				break
			}
			name = randomBoxName() + fmt.Sprintf("-%d", i+2)
		}
	} else if err := CheckBoxName(name); err != nil {
		return nil, err
	}
	if _, err := s.boxByName(ctx, name); err == nil {
		return nil, refusal(CodeConflict, BoxExistsWords(name))
	}
	spec.Box.Name, spec.Box.Kind = name, req.Kind
	if spec.Adopt != "" {
		held, err := s.st.SecurityBoxByGuest(ctx, s.st.Pool, db.SecurityBoxByGuestParams{BackendID: b.ID, GuestRef: spec.Adopt})
		if err != nil {
			return nil, fmt.Errorf("adopt: %w", err)
		}
		if len(held) > 0 {
			return nil, refusal(CodeConflict, wordsHoldsGuest(held[0].Name))
		}
	}
	guest, err := b.Boxes.Acquire(ctx, spec)
	if err != nil {
		return nil, backendRefusal(fmt.Errorf("make box %s on %s: %w", name, b.ID, err), "The box was not made: ")
	}
	box, err := BoxRow(s.st.CoreBoxInsert(ctx, s.st.Pool, db.CoreBoxInsertParams{ID: id, Name: name, Kind: req.Kind,
		ThreadID: thread, BackendID: b.ID, Host: guest.Host, GuestRef: guest.Ref, HasScreen: req.HasScreen, ScreenURL: req.ScreenURL}))
	if err != nil {
		_ = b.Boxes.Release(context.WithoutCancel(ctx), guest)
		return nil, fmt.Errorf("record box %s: %w", name, err)
	}
	tmplName := ""
	if req.Template != "" && spec.Adopt == "" {
		if _, err := s.Template(ctx, req.Template); err == nil {
			tmplName = req.Template
		}
	}
	s.recordMadeFrom(ctx, box.ID, tmplName, spec)
	if spec.Command != "" {
		if err := b.Boxes.Start(ctx, guest); err != nil {
			s.logger.Warn("the box's process did not start", "box", name, "err", err)
		}
	}
	s.Log(ctx, s.st.Pool, box.ID, EvMade, c, logMadeOnWords(b.Label), "", "", nil)
	return box, nil
}

// backendRefusal turns a backend's refusal of what was asked (ErrRefused,
// ErrNotFound, ErrUnsupported) into a refusal in its words, with before in
// front; anything else stays an error. This is the core's boundary: no
// backend's refusal of a request reaches a caller as an internal error.
func backendRefusal(err error, before string) error {
	var words *providers.RefusedError
	switch {
	case errors.As(err, &words):
		return &Refusal{Code: CodeBackend, Words: before + words.Why, TryAgain: words.TryAgain}
	case errors.Is(err, providers.ErrRefused), errors.Is(err, providers.ErrNotFound), errors.Is(err, providers.ErrUnsupported):
		return &Refusal{Code: CodeBackend, Words: before + err.Error()}
	case errors.Is(err, providers.ErrUnreachable):
		return &Refusal{Code: CodeUnreachable, Words: before + err.Error(), TryAgain: true}
	}
	return err
}

// boxByName reads the box of that name (a live one before a released one);
// none is store.ErrNotFound.
func (s *Kernel) boxByName(ctx context.Context, name string) (*Box, error) {
	b, err := BoxRow(s.st.CoreBoxByName(ctx, s.st.Reader(ctx), name))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("read box %s: %w", name, err)
	}
	return b, err
}

// BoxByID reads a box; none is store.ErrNotFound.
func (s *Kernel) BoxByID(ctx context.Context, q db.DBTX, id string) (*Box, error) {
	b, err := BoxRow(s.st.CoreBoxByID(ctx, q, id))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("read box %s: %w", id, err)
	}
	return b, err
}

// Box finds a box by its ID or name, as the caller may see it.
func (s *Kernel) Box(ctx context.Context, c Caller, ref string) (*Box, error) {
	var b *Box
	var err error
	if ValidID(PrefixBox, ref) {
		b, err = s.BoxByID(ctx, s.st.Reader(ctx), ref)
	} else {
		b, err = s.boxByName(ctx, ref)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, boxNotFound(ref)
	}
	if err != nil {
		return nil, err
	}
	if err := MayAct(c, ActSee, b, nil); err != nil {
		return nil, boxNotFound(ref)
	}
	return b, nil
}

// Boxes lists the boxes the caller may see, released ones included for the
// person.
func (s *Boxes) List(ctx context.Context, c Caller) ([]*Box, error) {
	all, err := BoxRows(s.st.CoreBoxes(ctx, s.st.Pool))
	if err != nil {
		return nil, fmt.Errorf("list boxes: %w", err)
	}
	var out []*Box
	for _, b := range all {
		if MayAct(c, ActSee, b, nil) == nil {
			out = append(out, b)
		}
	}
	return out, nil
}

// SetPresence records what the platform reports about a box: workspaces,
// desktop control and terminals. Only the person's token (the platform's)
// may report it.
func (s *Boxes) SetPresence(ctx context.Context, c Caller, ref string, p Presence) (*Box, error) {
	if !c.IsPerson() {
		return nil, refusal(CodeForbidden, wordsOnlyPlatformPresence)
	}
	b, err := s.Box(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	for _, w := range p.Workspaces {
		if _, err := s.thread(ctx, w.Thread); err != nil {
			return nil, refusal(CodeInvalid, wordsPresenceThread(w.Thread))
		}
	}
	if p.Terminals < 0 {
		return nil, refusal(CodeInvalid, wordsTerminalsBelowZero)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("set presence: %w", err)
	}
	if err := s.st.CoreBoxSetPresence(ctx, s.st.Pool, db.CoreBoxSetPresenceParams{ID: b.ID, Presence: raw}); err != nil {
		return nil, fmt.Errorf("set presence: %w", err)
	}
	b.Presence = p
	return b, nil
}

// IsExecutionMachine reports whether threads run on the box (any box with a
// thread on its machine that runs on it).
func (b *Box) IsExecutionMachine() bool {
	for _, w := range b.Presence.Workspaces {
		if w.RunsOn {
			return true
		}
	}
	return false
}
