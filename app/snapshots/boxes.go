package snapshots

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

var BoxNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{1,39}$`)

// CheckBoxName refuses a new box's name that breaks the machine rule, in
// words; every path that names a box (acquire, fork, the tools) asks it.
func CheckBoxName(name string) error {
	if !BoxNameRE.MatchString(name) {
		return refusal(CodeInvalid, MachineNameWords("A box's name"))
	}
	return nil
}

var ()

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

// boxByName reads the box of that name (a live one before a released one);
// none is store.ErrNotFound.
func (s *Records) BoxByName(ctx context.Context, name string) (*Box, error) {
	b, err := BoxRow(s.st.CoreBoxByName(ctx, s.st.Reader(ctx), name))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("read box %s: %w", name, err)
	}
	return b, err
}

// BoxByID reads a box; none is store.ErrNotFound.
func (s *Records) BoxByID(ctx context.Context, q db.DBTX, id string) (*Box, error) {
	b, err := BoxRow(s.st.CoreBoxByID(ctx, q, id))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("read box %s: %w", id, err)
	}
	return b, err
}

// Box finds a box by its ID or name, as the caller may see it.
func (s *Records) Box(ctx context.Context, c Caller, ref string) (*Box, error) {
	var b *Box
	var err error
	if ValidID(PrefixBox, ref) {
		b, err = s.BoxByID(ctx, s.st.Reader(ctx), ref)
	} else {
		b, err = s.BoxByName(ctx, ref)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, BoxNotFound(ref)
	}
	if err != nil {
		return nil, err
	}
	if err := MayAct(c, ActSee, b, nil); err != nil {
		return nil, BoxNotFound(ref)
	}
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
