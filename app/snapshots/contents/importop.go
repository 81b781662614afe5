package contents

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// importParams is an import operation's params: the staged files, which the
// operation owns from its admission and removes when it ends, and what was
// here when it was admitted, so a resumed run answers as the first would.
type importParams struct {
	Files []importFile `json:"files"`
	// Backend is the backend the snapshots go to.
	Backend string `json:"backend"`
	// Already lists the snapshots that were here already at admission.
	Already []string `json:"already,omitempty"`
	// NewBox is set when the box was not here at admission: the import
	// makes it.
	NewBox bool `json:"newBox,omitempty"`
	// Why is the caller's reason, for the records.
	Why string `json:"why,omitempty"`
}

// importFile is one staged export file: its folder in the data folder's
// tmp (made by Stage, never named by a caller), its manifest, and each
// snapshot's staged archive.
type importFile struct {
	Name     string            `json:"name"`
	Dir      string            `json:"dir"`
	Manifest ExportManifest    `json:"manifest"`
	Archives map[string]string `json:"archives"`
}

// Import admits an import and waits for it to end, answering what it did:
// the Import page and a share code's redeem call it.
func (s *Contents) Import(ctx context.Context, c snapshots.Caller, batch []*Staged) (*ImportResult, error) {
	op, err := s.AdmitImport(ctx, c, batch, "")
	if err != nil {
		return nil, err
	}
	if op, err = s.k.Wait(ctx, op.ID); err != nil {
		return nil, err
	}
	return s.ImportResultOf(op)
}

// ImportResultOf is what an ended import operation did, or its failure as a
// refusal; an import still running is refused as busy.
func (s *Contents) ImportResultOf(op *snapshots.Operation) (*ImportResult, error) {
	switch op.State {
	case snapshots.OpDone:
		res, err := s.importKind.Result(op)
		if err != nil {
			return nil, fmt.Errorf("read import %s: %w", op.ID, err)
		}
		return &res, nil
	case snapshots.OpFailed:
		words := importFailedWords
		if op.Error != nil && *op.Error != "" {
			words = *op.Error
		}
		return nil, refusal(snapshots.CodeInvalid, words)
	}
	return nil, refusal(snapshots.CodeRunning, importRunningWords(op.ID, op.Step))
}

// AdmitImport admits an import of a batch of staged export files of one
// box, in any order, as an operation: checked here (one box, not released
// here, a backend that imports, no snapshot of another box), then run by its
// job, which publishes through the backend and writes the records. The
// operation owns the staged files from here: their Remove does nothing, and
// they go when it ends. A repeated request ID answers the same import.
//
// Each snapshot keeps its ID and its ancestry and gets a record here, the
// person's; a name its box already uses gets " (2)". A box that is not here
// is made from the batch's one tip, and has no head when the batch has
// competing tips; a box that is here has its head advanced to a known
// descendant (importhead.go). Importing the same snapshots again changes
// nothing.
func (s *Contents) AdmitImport(ctx context.Context, c snapshots.Caller, batch []*Staged, requestID string) (*snapshots.Operation, error) {
	if err := snapshots.MayAct(c, snapshots.ActImport, nil, nil); err != nil {
		return nil, err
	}
	if op, err := s.k.ExistingRequest(ctx, s.st.Pool, c, requestID, snapshots.OpImport, nil); err != nil || op != nil {
		return op, err
	}
	if len(batch) == 0 {
		return nil, refusal(snapshots.CodeInvalid, chooseImportWords)
	}
	mb := batch[0].Manifest.Box
	for _, st := range batch[1:] {
		if st.Manifest.Box.ID != mb.ID {
			return nil, refusal(snapshots.CodeInvalid, importOneBoxWords(batch[0].Name, mb.Name, st.Name, st.Manifest.Box.Name))
		}
	}
	p := importParams{Why: c.Why}
	var op *snapshots.Operation
	err := store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		box, err := s.k.BoxByID(ctx, tx, mb.ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		var be snapshots.Backend
		if box != nil {
			if box, err = s.k.LockBox(ctx, tx, box.ID); err != nil {
				return err
			}
			if box.State == snapshots.BoxReleased || box.State == snapshots.BoxReleasing {
				return refusal(snapshots.CodeConflict, releasedNoImportWords(box.Name))
			}
			if be, err = s.k.Backend(box.BackendID); err != nil {
				return err
			}
		} else {
			p.NewBox = true
			for _, b := range s.k.Backends() {
				if b.Kind == mb.Backend {
					if _, ok := b.Snap.(providers.Exporter); ok {
						be = b
						break
					}
				}
			}
			if be.ID == "" {
				return refusal(snapshots.CodePlan, noBackendImportsWords(mb.Backend))
			}
		}
		if _, ok := be.Snap.(providers.Exporter); !ok {
			return refusal(snapshots.CodePlan, CannotImportWords(be.Label))
		}
		p.Backend = be.ID
		// The snapshots it brings in are pinned until it ends: the
		// reconcile leaves a published one with no record yet to it.
		var pins []string
		for _, st := range batch {
			for _, es := range st.Manifest.Snapshots {
				sn, err := s.k.SnapshotByID(ctx, tx, es.ID)
				if err == nil && sn.BoxID != mb.ID {
					return refusal(snapshots.CodeConflict, alreadyHereWords(es.ID, sn.BoxName))
				} else if err == nil {
					p.Already = append(p.Already, es.ID)
				} else if errors.Is(err, store.ErrNotFound) {
					pins = append(pins, es.ID)
				} else {
					return err
				}
			}
			p.Files = append(p.Files, importFile{Name: st.Name, Dir: st.dir, Manifest: st.Manifest, Archives: st.files})
		}
		op, err = s.k.Admit(ctx, tx, snapshots.OpRequest{Kind: snapshots.OpImport, Box: box, Pins: pins, Caller: c, RequestID: requestID, Params: p})
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, st := range batch {
		st.dir = "" // the operation's now
	}
	return op, nil
}

// runImport runs an import from the step it reached: publish (the backend
// publishes the batch; publishing it again is a no-op), record (the box and
// the records, upserts), box (making a box the import brought here), clean
// (the records are written: the staged files go, then it ends). A run
// resumed at clean only reads what the first wrote.
func (s *Contents) runImport(ctx context.Context, op *snapshots.Operation, p importParams) (ImportResult, error) {
	if len(p.Files) == 0 {
		return ImportResult{}, s.k.End(ctx, op, snapshots.OpFailed, failImportParams, "")
	}
	c := snapshots.CallerOf(op)
	c.Why = p.Why
	// The staged files go as the import ends, done or failed.
	clean := func() {
		for _, f := range p.Files {
			_ = os.RemoveAll(f.Dir)
		}
	}
	fail := func(words string) error {
		clean()
		return s.k.End(ctx, op, snapshots.OpFailed, words, "")
	}
	be, err := s.k.Backend(p.Backend)
	if err != nil {
		return ImportResult{}, fail(err.Error())
	}
	if op.Step != snapshots.StepClean {
		failed, err := s.importSteps(ctx, op, c, be, p)
		if err != nil {
			return ImportResult{}, err
		}
		if failed != "" {
			return ImportResult{}, fail(failed)
		}
		if err := s.k.Step(ctx, op, snapshots.StepClean); err != nil {
			return ImportResult{}, err
		}
	}
	res, _, err := s.importedNow(ctx, p)
	if err != nil {
		return ImportResult{}, err
	}
	clean()
	return *res, nil
}

// importSteps publishes, records and makes the box, each step recorded
// before it runs; it answers a failure in words, or an error to resume on.
func (s *Contents) importSteps(ctx context.Context, op *snapshots.Operation, c snapshots.Caller, be snapshots.Backend, p importParams) (string, error) {
	ex, ok := be.Snap.(providers.Exporter)
	if !ok {
		return CannotImportWords(be.Label), nil
	}
	if err := s.k.Step(ctx, op, snapshots.StepPublish); err != nil {
		return "", err
	}
	done, err := s.publishImport(ctx, ex, p.Files[0].Manifest.Box.ID, p.Files)
	if err != nil {
		var re *providers.RefusedError
		if errors.As(err, &re) {
			return re.Why, nil
		}
		if ctx.Err() != nil {
			return "", err // stopped: Recover resumes it
		}
		return failImportWords(err), nil
	}
	if err := s.k.Step(ctx, op, snapshots.StepRecord); err != nil {
		return "", err
	}
	res, box, made, parents, err := s.recordImport(ctx, c, be, p, done)
	if err != nil {
		return "", err
	}
	if res.Made && box.State == snapshots.BoxMaking {
		if err := s.k.Step(ctx, op, snapshots.StepBox); err != nil {
			return "", err
		}
		if err := s.makeImportedBox(ctx, c, box, be, made, parents, res); err != nil {
			return err.Error(), nil
		}
	}
	if !res.Made {
		if err := s.advanceHead(ctx, box.ID, made, parents); err != nil {
			return "", err
		}
	}
	if len(made) > 0 || res.Made {
		names := make([]string, len(made))
		for i, sn := range made {
			names[i] = sn.Name
		}
		words := logImportedWords(names, p.Files[0].Manifest.Install != s.install)
		first := ""
		if len(made) > 0 {
			first = made[0].ID
		}
		s.k.Log(ctx, s.st.Pool, box.ID, EvImported, c, words, first, op.ID, nil)
	}
	return "", nil
}

// importedNow is what an import did, read from the records it wrote: its
// snapshots in the files' order, each new unless it was here at admission.
func (s *Contents) importedNow(ctx context.Context, p importParams) (*ImportResult, *snapshots.Box, error) {
	mb := p.Files[0].Manifest.Box
	box, err := s.k.BoxByID(ctx, s.st.Pool, mb.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("read the imported box: %w", err)
	}
	already := map[string]bool{}
	for _, id := range p.Already {
		already[id] = true
	}
	res := &ImportResult{Box: box.ID, BoxName: box.Name, Made: p.NewBox}
	seen := map[string]bool{}
	for _, f := range p.Files {
		for _, es := range f.Manifest.Snapshots {
			if seen[es.ID] {
				continue
			}
			seen[es.ID] = true
			sn, err := s.k.SnapshotByID(ctx, s.st.Pool, es.ID)
			if err != nil {
				return nil, nil, fmt.Errorf("read the imported snapshot %s: %w", es.ID, err)
			}
			parent := ""
			if sn.ParentID != nil {
				parent = *sn.ParentID
			}
			res.Snapshots = append(res.Snapshots, ImportedSnapshot{ID: sn.ID, Name: sn.Name, Parent: parent, Already: already[sn.ID]})
		}
	}
	if res.Made {
		res.MadeFrom = s.madeFrom(ctx, box)
	}
	res.Words = importWords(res)
	return res, box, nil
}

// publishImport has the backend check and publish the batch's archives.
func (s *Contents) publishImport(ctx context.Context, ex providers.Exporter, group string, files []importFile) ([]providers.ImportedSnapshot, error) {
	var readers []io.Reader
	for _, f := range files {
		for _, es := range f.Manifest.Snapshots {
			r, err := os.Open(f.Archives[es.ID])
			if err != nil {
				return nil, fmt.Errorf("import %s: %w", f.Name, err)
			}
			defer r.Close()
			readers = append(readers, r)
		}
	}
	settings, _ := s.k.ReadSettings(ctx)
	return ex.ImportSnapshots(ctx, providers.ImportOptions{Group: group, RoomPercent: settings.RoomPercent}, readers)
}

// recordImport writes the box (when it is not here) and each published
// snapshot's record, in one transaction; both are upserts, so a resumed run
// writes nothing twice. A snapshot is new unless it was here at admission.
func (s *Contents) recordImport(ctx context.Context, c snapshots.Caller, be snapshots.Backend, p importParams, done []providers.ImportedSnapshot) (*ImportResult, *snapshots.Box, []*snapshots.Snapshot, map[string]string, error) {
	mb := p.Files[0].Manifest.Box
	records := map[string]ExportedSnapshot{}
	for _, f := range p.Files {
		for _, es := range f.Manifest.Snapshots {
			records[es.ID] = es
		}
	}
	already := map[string]bool{}
	for _, id := range p.Already {
		already[id] = true
	}
	res := &ImportResult{Box: mb.ID}
	var box *snapshots.Box
	var made []*snapshots.Snapshot
	parents := map[string]string{}
	err := store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		res.Snapshots, made, res.Made = nil, nil, false
		var err error
		box, err = s.k.BoxByID(ctx, tx, mb.ID)
		if errors.Is(err, store.ErrNotFound) {
			name, err := s.freeBoxName(ctx, tx, mb.Name)
			if err != nil {
				return err
			}
			box, err = snapshots.BoxRow(s.st.MoveBoxInsert(ctx, tx, db.MoveBoxInsertParams{ID: mb.ID, Name: name, Kind: mb.Kind,
				System: mb.System, BackendID: be.ID, GuestRef: mb.ID, OwnerHost: s.k.OwnerFor(be)}))
			if err != nil {
				return fmt.Errorf("record box %s: %w", name, err)
			}
		} else if err != nil {
			return err
		}
		// Made here by this import (or by one cut short, still making it).
		res.Made = p.NewBox || box.State == snapshots.BoxMaking
		taken, err := s.k.NamesOfBox(ctx, tx, box.ID)
		if err != nil {
			return err
		}
		for _, d := range done {
			parents[d.Ref.ID] = d.Parent
			es := records[d.Ref.ID]
			if sn, err := s.k.SnapshotByID(ctx, tx, d.Ref.ID); err == nil {
				if already[sn.ID] {
					res.Snapshots = append(res.Snapshots, ImportedSnapshot{ID: sn.ID, Name: sn.Name, Parent: d.Parent, Already: true})
				} else {
					// Recorded by this import's earlier run.
					made = append(made, sn)
					res.Snapshots = append(res.Snapshots, ImportedSnapshot{ID: sn.ID, Name: sn.Name, Parent: d.Parent})
				}
				continue
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
			name := snapshots.UniqueName(es.Name, taken)
			taken[name] = true
			// Ancestry is the snapshot's own manifest's parent, never
			// the order of the batch.
			var parent *string
			if d.Parent != "" {
				parent = &d.Parent
			}
			sn, err := snapshots.SnapshotRow(s.st.MoveSnapshotInsert(ctx, tx, db.MoveSnapshotInsertParams{ID: d.Ref.ID, BoxID: box.ID,
				BoxName: box.Name, BoxKind: box.Kind, BoxSystem: box.System, BackendID: be.ID, Storage: d.Ref.Storage,
				Name: name, Note: es.Note, TakenAt: es.TakenAt, CapturedAt: es.CapturedAt, ByKind: c.ByKind(),
				ByWhy: snapshots.NilIfEmpty(c.Why), Holds: importedHolds(d), ForkSafe: es.ForkSafe, ParentID: parent, Ref: d.Ref.Ref}))
			if err != nil {
				return fmt.Errorf("record snapshot %s: %w", d.Ref.ID, err)
			}
			made = append(made, sn)
			res.Snapshots = append(res.Snapshots, ImportedSnapshot{ID: sn.ID, Name: sn.Name, Parent: d.Parent})
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	res.BoxName = box.Name
	return res, box, made, parents, nil
}

// madeFrom is the snapshot an imported box was made from, its head, when a
// resumed import finds the box made already.
func (s *Contents) madeFrom(ctx context.Context, box *snapshots.Box) string {
	b, err := s.k.BoxByID(ctx, s.st.Pool, box.ID)
	if err != nil || b.HeadID == nil {
		return ""
	}
	if sn, err := s.k.SnapshotByID(ctx, s.st.Pool, *b.HeadID); err == nil {
		return sn.Name
	}
	return ""
}
