package boxes

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

var nameAdjectives = []string{"amber", "brisk", "calm", "dusky", "eager", "fair", "grey", "hazel", "icy", "jolly", "keen", "lucid", "mellow", "noble", "olive", "quick", "rapid", "sunny", "tidy", "vivid", "warm", "young", "zesty"}

var nameNouns = []string{"fox", "lake", "ridge", "glade", "wren", "brook", "cedar", "dune", "elm", "fern", "grove", "heron", "isle", "jay", "kite", "lark", "moss", "otter", "pine", "reef", "stone", "vale", "wolf"}

func randomBoxName() string {
	b := make([]byte, 2)
	_, _ = rand.Read(b)
	return nameAdjectives[int(b[0])%len(nameAdjectives)] + "-" + nameNouns[int(b[1])%len(nameNouns)]
}

// boxSpecOf reads what req asks of a backend, under MayBox: a box template
// by name, or, for the person only, the parts given.
func (s *Boxes) boxSpecOf(ctx context.Context, c snapshots.Caller, req *snapshots.BoxRequest, box providers.BoxIdentity) (providers.BoxSpec, error) {
	if c.Kind == snapshots.CallerAgent {
		if err := agentBoxFields(*req); err != nil {
			return providers.BoxSpec{}, err
		}
	}
	if req.Template != "" && req.Adopt == "" {
		t, err := s.Template(ctx, req.Template)
		if err == nil {
			if err := snapshots.MayBox(c, snapshots.BoxFromTemplate, nil); err != nil {
				return providers.BoxSpec{}, err
			}
			for _, f := range []struct{ name, given, set string }{
				{"backend", req.Backend, t.Backend}, {"kind", req.Kind, t.Kind}, {"command", req.Command, t.Command},
			} {
				if f.given != "" && f.given != f.set {
					return providers.BoxSpec{}, &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: templateSetsWords(t.Name, f.name)}
				}
			}
			req.Backend, req.Kind, req.Command = t.Backend, t.Kind, t.Command
			if t.HasScreen {
				req.HasScreen, req.ScreenURL = true, t.ScreenURL
			}
			box.Kind = t.Kind
			return templateSpec(t, box, req.Host), nil
		}
		if _, ok := snapshots.AsRefusal(err); !ok || c.Kind == snapshots.CallerAgent {
			return providers.BoxSpec{}, err
		}
	}
	act := snapshots.BoxFromParts
	if req.Adopt != "" {
		act = snapshots.BoxAdopt
	}
	if err := snapshots.MayBox(c, act, nil); err != nil {
		return providers.BoxSpec{}, err
	}
	if err := snapshots.CheckText("A box's command", req.Command); err != nil {
		return providers.BoxSpec{}, err
	}
	for _, f := range []struct{ what, v string }{
		{"A box's kind", req.Kind}, {"A box's host", req.Host}, {"A box's template", req.Template}, {"An adopt reference", req.Adopt},
		{"A box's screen address", req.ScreenURL},
	} {
		if err := snapshots.CheckLine(f.what, f.v); err != nil {
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
func (s *Boxes) AcquireBox(ctx context.Context, c snapshots.Caller, req snapshots.BoxRequest) (*snapshots.Box, error) {
	var thread *string
	switch {
	case c.Kind == snapshots.CallerAgent:
		t := c.Thread
		thread = &t
	case c.IsPerson() && req.Thread != "":
		if !snapshots.ValidID(snapshots.PrefixThread, req.Thread) {
			return nil, &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: snapshots.NoThreadWords(req.Thread)}
		}
		if _, err := s.k.Thread(ctx, req.Thread); err != nil {
			return nil, err
		}
		thread = &req.Thread
	case !c.IsPerson():
		return nil, &snapshots.Refusal{Code: snapshots.CodeForbidden, Words: snapshots.NotAllowedWords}
	}
	if err := snapshots.CheckLine("A box's name", req.Name); err != nil {
		return nil, err
	}
	id := snapshots.NewID(snapshots.PrefixBox)
	name := strings.TrimSpace(req.Name)
	spec, err := s.boxSpecOf(ctx, c, &req, providers.BoxIdentity{ID: id, Name: name, Kind: req.Kind, Install: s.k.Install()})
	if err != nil {
		return nil, err
	}
	if req.Backend == "" && len(s.order()) > 0 {
		req.Backend = s.order()[0]
	}
	b, err := s.k.Backend(req.Backend)
	if err != nil {
		return nil, err
	}
	if req.Kind == "" {
		req.Kind = "linux"
	}
	if name == "" {
		name = randomBoxName()
		for i := 0; i < 20; i++ {
			if _, err := s.k.BoxByName(ctx, name); errors.Is(err, store.ErrNotFound) {
				break
			}
			name = randomBoxName() + fmt.Sprintf("-%d", i+2)
		}
	} else if err := snapshots.CheckBoxName(name); err != nil {
		return nil, err
	}
	if _, err := s.k.BoxByName(ctx, name); err == nil {
		return nil, &snapshots.Refusal{Code: snapshots.CodeConflict, Words: snapshots.BoxExistsWords(name)}
	}
	spec.Box.Name, spec.Box.Kind = name, req.Kind
	if spec.Adopt != "" {
		held, err := s.st.SecurityBoxByGuest(ctx, s.st.Pool, db.SecurityBoxByGuestParams{BackendID: b.ID, GuestRef: spec.Adopt})
		if err != nil {
			return nil, fmt.Errorf("adopt: %w", err)
		}
		if len(held) > 0 {
			return nil, &snapshots.Refusal{Code: snapshots.CodeConflict, Words: holdsGuestWords(held[0].Name)}
		}
	}
	guest, err := b.Boxes.Acquire(ctx, spec)
	if err != nil {
		return nil, backendRefusal(fmt.Errorf("make box %s on %s: %w", name, b.ID, err), "The box was not made: ")
	}
	box, err := snapshots.BoxRow(s.st.CoreBoxInsert(ctx, s.st.Pool, db.CoreBoxInsertParams{ID: id, Name: name, Kind: req.Kind,
		ThreadID: thread, BackendID: b.ID, Host: guest.Host, GuestRef: guest.Ref, HasScreen: req.HasScreen, ScreenURL: req.ScreenURL, OwnerHost: s.k.OwnerFor(b)}))
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
	s.k.Log(ctx, s.st.Pool, box.ID, snapshots.EvMade, c, LogMadeOnWords(b.Label), "", "", nil)
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
		return &snapshots.Refusal{Code: snapshots.CodeBackend, Words: before + words.Why, TryAgain: words.TryAgain}
	case errors.Is(err, providers.ErrRefused), errors.Is(err, providers.ErrNotFound), errors.Is(err, providers.ErrUnsupported):
		return &snapshots.Refusal{Code: snapshots.CodeBackend, Words: before + err.Error()}
	case errors.Is(err, providers.ErrUnreachable):
		return &snapshots.Refusal{Code: snapshots.CodeUnreachable, Words: before + err.Error(), TryAgain: true}
	}
	return err
}

// Boxes lists the boxes the caller may see, released ones included for the
// person.
func (s *Boxes) List(ctx context.Context, c snapshots.Caller) ([]*snapshots.Box, error) {
	all, err := snapshots.BoxRows(s.st.CoreBoxes(ctx, s.st.Pool))
	if err != nil {
		return nil, fmt.Errorf("list boxes: %w", err)
	}
	var out []*snapshots.Box
	for _, b := range all {
		if snapshots.MayAct(c, snapshots.ActSee, b, nil) == nil {
			out = append(out, b)
		}
	}
	return out, nil
}

// SetPresence records what the platform reports about a box: workspaces,
// desktop control and terminals. Only the person's token (the platform's)
// may report it.
func (s *Boxes) SetPresence(ctx context.Context, c snapshots.Caller, ref string, p snapshots.Presence) (*snapshots.Box, error) {
	if !c.IsPerson() {
		return nil, &snapshots.Refusal{Code: snapshots.CodeForbidden, Words: onlyPlatformPresenceWords}
	}
	b, err := s.k.Box(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	for _, w := range p.Workspaces {
		if _, err := s.k.Thread(ctx, w.Thread); err != nil {
			return nil, &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: presenceThreadWords(w.Thread)}
		}
	}
	if p.Terminals < 0 {
		return nil, &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: terminalsBelowZeroWords}
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
