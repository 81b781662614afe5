package boxes

import (
	"context"
	"fmt"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// EvSnapshotForgotten is the box log's event for a record the person forgot.
const EvSnapshotForgotten = "snapshot-forgotten"

// GoneBackend is a backend no longer in settings whose snapshots boxsnap
// still records: they show as unavailable, with "Forget its snapshots" for
// the person: a backend that cannot be reached loses nothing by itself.
type GoneBackend struct {
	ID        string `json:"backend"`
	Snapshots int    `json:"snapshots"`
	Bytes     int64  `json:"bytes"`
}

// ForgetPlan is what "Forget its snapshots" removes: the records of every
// snapshot of a backend no longer in settings, named with their size and
// price.
type ForgetPlan struct {
	Backend   string       `json:"backend"`
	Snapshots []ForgetItem `json:"snapshots"`
	Bytes     int64        `json:"bytes"`
	// Lines name each snapshot, its box, size and price.
	Lines []string `json:"lines"`
	// Words ask the question, and say the records go and nothing else.
	Words string `json:"words"`
}

// ForgetItem is one snapshot Forget would remove the record of.
type ForgetItem struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	BoxID string `json:"box"`
}

// GoneBackends lists the backends no longer in settings that still have
// snapshot records.
func (s *Forgetting) GoneBackends(ctx context.Context) ([]GoneBackend, error) {
	// The backends first (a few rows), then only theirs of the snapshots:
	// most installs have none gone, and read no snapshot.
	gone, err := s.st.TabGoneBackendIDs(ctx, s.st.Pool, s.order())
	if err != nil {
		return nil, fmt.Errorf("gone backends: %w", err)
	}
	if len(gone) == 0 {
		return []GoneBackend{}, nil
	}
	rows, err := s.st.TabGoneBackendSnapshots(ctx, s.st.Pool, gone)
	if err != nil {
		return nil, fmt.Errorf("gone backends' snapshots: %w", err)
	}
	out := make([]GoneBackend, 0, len(rows))
	for _, r := range rows {
		out = append(out, GoneBackend{ID: r.BackendID, Snapshots: r.Snapshots, Bytes: r.Bytes})
	}
	return out, nil
}

// ForgetBackendPlan says what forgetting backend's snapshots would remove,
// and changes nothing.
func (s *Forgetting) ForgetBackendPlan(ctx context.Context, c snapshots.Caller, backend string) (*ForgetPlan, error) {
	if !c.IsPerson() {
		return nil, &snapshots.Refusal{Code: snapshots.CodeForbidden, Words: onlyPersonForgetsWords}
	}
	if _, in := s.configured(backend); in {
		return nil, &snapshots.Refusal{Code: snapshots.CodeConflict, Words: forgetInSettingsWords(backend)}
	}
	all, err := s.st.PersonSnapshotsOfBackend(ctx, s.st.Pool, backend)
	if err != nil {
		return nil, fmt.Errorf("snapshots of %s: %w", backend, err)
	}
	if len(all) == 0 {
		return nil, &snapshots.Refusal{Code: snapshots.CodeNotFound, Words: noRecordsWords(backend)}
	}
	p := &ForgetPlan{Backend: backend}
	var shown int64 // the total the words say: the sum of the lines' sizes
	for _, sn := range all {
		p.Snapshots = append(p.Snapshots, ForgetItem{ID: sn.ID, Name: sn.Name, BoxID: sn.BoxID})
		line := fmt.Sprintf("‘%s’ of %s", sn.Name, sn.BoxName)
		var what []string
		if sn.SizeBytes != nil {
			p.Bytes += *sn.SizeBytes
			shown += providers.Shown(*sn.SizeBytes)
			what = append(what, snapshots.GB(*sn.SizeBytes))
		} else {
			what = append(what, "size unknown")
		}
		switch ch := snapshots.ChargeOfSnapshot(&snapshots.Snapshot{Price: sn.Price, SizeBytes: sn.SizeBytes}); {
		case ch.Paid && ch.Known:
			what = append(what, "about "+snapshots.Money(ch.Monthly(), ch.Currency)+" a month")
		case ch.Paid:
			what = append(what, "price unknown")
		}
		p.Lines = append(p.Lines, line+" ("+strings.Join(what, ", ")+")")
	}
	n := snapshots.Plural(len(all), "snapshot", "snapshots")
	size := ""
	if shown > 0 {
		size = ", " + snapshots.GB(shown)
	}
	p.Words = fmt.Sprintf("Forget the %s of %s%s, a backend no longer in settings? boxsnap removes their records only: they may still exist on %s and be billed.",
		n, backend, strings.Replace(size, ", ", " (", 1)+map[bool]string{true: ")", false: ""}[size != ""], backend)
	return p, nil
}

// ForgetBackend removes the records of a removed backend's snapshots, and
// nothing on any backend. A snapshot an operation still uses keeps its
// record, and the answer names it.
func (s *Forgetting) ForgetBackend(ctx context.Context, c snapshots.Caller, backend string) (*ForgetPlan, []string, error) {
	p, err := s.ForgetBackendPlan(ctx, c, backend)
	if err != nil {
		return nil, nil, err
	}
	var kept []string
	for _, sn := range p.Snapshots {
		n, err := s.st.PersonSnapshotForget(ctx, s.st.Pool, db.PersonSnapshotForgetParams{ID: sn.ID, BackendID: backend})
		if err != nil {
			return nil, nil, fmt.Errorf("forget %s: %w", sn.ID, err)
		}
		if n == 0 {
			kept = append(kept, "‘"+sn.Name+"’")
			continue
		}
		s.k.Log(ctx, s.st.Pool, sn.BoxID, EvSnapshotForgotten, c,
			LogForgottenWords(sn.Name, sn.ID, backend),
			sn.ID, "", nil)
	}
	return p, kept, nil
}
