package heads

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// Ancestry and heads: a snapshot records what it was taken from, the box's
// head at the take; the box's head is the snapshot its next take is taken
// from. The head moves forward by itself when a take, or an import, of a
// known descendant is ready, and moves anywhere only by a restore, a fork
// making a box from a snapshot, or someone choosing it (ChooseHead). Nothing
// is chosen by when a snapshot was taken.

// Ancestor is one snapshot of a lineage, as the caller may see it.
type Ancestor struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Box   string `json:"box"`
	State string `json:"state"`
	// Hidden is set for a snapshot the caller may not see: its ID and name
	// are left out, so the chain reads as a chain without telling them.
	Hidden bool `json:"hidden,omitempty"`
}

// Lineage is a snapshot's ancestry, or a box's head and its ancestry.
type Lineage struct {
	// Head is the box's head (for a box's lineage), or nil when it has none.
	Head *Ancestor `json:"head,omitempty"`
	// Chain lists the snapshot (or the head) first, then what it was taken
	// from, and so on, as far as the records go. Missing is set when the
	// chain ends at a snapshot whose record is gone.
	Chain   []Ancestor `json:"chain"`
	Missing bool       `json:"missing,omitempty"`
}

// SnapshotLineage gives a snapshot's ancestry, as the caller may see it.
func (s *Heads) SnapshotLineage(ctx context.Context, c snapshots.Caller, id string) (Lineage, error) {
	sn, _, err := s.snaps.Snapshot(ctx, c, id)
	if err != nil {
		return Lineage{}, err
	}
	return s.lineage(ctx, c, sn.ID)
}

// BoxLineage gives a box's head and its ancestry, as the caller may see
// them.
func (s *Heads) BoxLineage(ctx context.Context, c snapshots.Caller, boxRef string) (Lineage, error) {
	b, err := s.k.Box(ctx, c, boxRef)
	if err != nil {
		return Lineage{}, err
	}
	if b.HeadID == nil {
		return Lineage{Chain: []Ancestor{}}, nil
	}
	l, err := s.lineage(ctx, c, *b.HeadID)
	if err != nil {
		return Lineage{}, err
	}
	if len(l.Chain) > 0 {
		h := l.Chain[0]
		l.Head = &h
	}
	return l, nil
}

func (s *Heads) lineage(ctx context.Context, c snapshots.Caller, id string) (Lineage, error) {
	chain, err := snapshots.SnapshotRows(s.st.LookLineage(ctx, s.st.Pool, db.LookLineageParams{ID: id, MaxDepth: snapshots.MaxLineage}))
	if err != nil {
		return Lineage{}, fmt.Errorf("read lineage: %w", err)
	}
	out := Lineage{Chain: []Ancestor{}}
	boxes := map[string]*snapshots.Box{}
	for _, sn := range chain {
		b, ok := boxes[sn.BoxID]
		if !ok {
			b, _ = s.k.BoxByID(ctx, s.st.Pool, sn.BoxID)
			boxes[sn.BoxID] = b
		}
		if b == nil || snapshots.MayAct(c, snapshots.ActSee, b, sn) != nil {
			out.Chain = append(out.Chain, Ancestor{Hidden: true})
			continue
		}
		out.Chain = append(out.Chain, Ancestor{ID: sn.ID, Name: sn.Name, Box: b.Name, State: sn.State})
	}
	if len(chain) == 0 {
		out.Missing = true
	} else if last := chain[len(chain)-1]; last.ParentID != nil && len(chain) < snapshots.MaxLineage {
		out.Missing = true // its parent's record is gone
	}
	return out, nil
}

// ParentName says what a snapshot was taken from, for its row: the parent's
// name, "" when it has none, or words when its record is gone.
func (s *Heads) ParentName(ctx context.Context, sn *snapshots.Snapshot) string {
	if sn.ParentID == nil {
		return ""
	}
	p, err := s.k.SnapshotByID(ctx, s.st.Pool, *sn.ParentID)
	if err != nil {
		return "a deleted snapshot"
	}
	return "‘" + p.Name + "’"
}
