package sweeps

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// HousekeepReport says what housekeeping removed.
type HousekeepReport struct {
	Failed    int   // failed records older than snapshots.FailedKeptFor
	Lost      int   // lost records older than snapshots.LostKeptFor
	LogPruned int64 // box log events past snapshots.BoxLogKeep per box
	// ToolAnswers are agent tools' answers kept under a retry key for
	// longer than the retry keys are kept (RetryKeysKeptFor).
	ToolAnswers int64
	// RequestKeys are the request keys of operations that ended longer
	// ago than that, forgotten; the operations stay.
	RequestKeys int64
}

// Housekeep removes failed records after FailedKeptFor (24 hours) and lost
// ones after LostKeptFor (7 days), both fixed, not settings; it prunes each
// box's log to BoxLogKeep events, forgets the retry keys after
// RetryKeysKeptFor (a setting, 7 days unless set): the agent tools' answers
// kept under one, and the request keys of operations that ended, so a
// retry within that time answers the first call and one later does the
// work again; and it folds the tab's counts (Tab().Tally).
// Found records stay until the person deletes them. Records pinned by an
// operation stay.
func (s *Sweeps) Housekeep(ctx context.Context) (HousekeepReport, error) {
	var rep HousekeepReport
	now := s.now()
	failed, err := s.st.SweepFailedOld(ctx, s.st.Pool, now.Add(-snapshots.FailedKeptFor))
	if err != nil {
		return rep, fmt.Errorf("housekeeping: failed records: %w", err)
	}
	lost, err := s.st.SweepLostOld(ctx, s.st.Pool, now.Add(-snapshots.LostKeptFor))
	if err != nil {
		return rep, fmt.Errorf("housekeeping: lost records: %w", err)
	}
	rep.Failed, rep.Lost = len(failed), len(lost)
	if rep.LogPruned, err = s.st.SweepLogPrune(ctx, s.st.Pool, snapshots.BoxLogKeep); err != nil {
		return rep, fmt.Errorf("housekeeping: prune the box log: %w", err)
	}
	if rep.ToolAnswers, rep.RequestKeys, err = s.forgetRetryKeys(ctx, now.Add(-s.retryKeysKeptFor)); err != nil {
		return rep, err
	}
	// A restore that ended before its undo was taken (its stop failed)
	// leaves the picture it held for the undo.
	if _, err := s.st.SweepRestorePictures(ctx, s.st.Pool); err != nil {
		return rep, fmt.Errorf("housekeeping: restores' held pictures: %w", err)
	}
	// The tab's counts grow a row or two with each change of a record;
	// fold them here too, for an install whose tab nobody opens.
	if err := s.st.TabTallyCompact(ctx, s.st.Pool); err != nil {
		return rep, fmt.Errorf("housekeeping: fold the tab's counts: %w", err)
	}
	return rep, nil
}

// ExpireKeeps admits an expiry, a delete of kind "expiry" by boxsnap ("its
// keep ended"), for each kept snapshot whose keep date has passed, once no
// operation uses it (an expiry is a delete, not a state of its own);
// eligible is asked at admission and again when the delete runs. It answers
// the operations it admitted.
func (s *Sweeps) ExpireKeeps(ctx context.Context) ([]*snapshots.Operation, error) {
	due, err := snapshots.SnapshotRows(s.st.SweepExpired(ctx, s.st.Pool, s.now()))
	if err != nil {
		return nil, fmt.Errorf("expiry: %w", err)
	}
	tz := s.k.TimeZone(ctx)
	var ops []*snapshots.Operation
	for _, cand := range due {
		var op *snapshots.Operation
		err := store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
			b, err := s.k.LockBox(ctx, tx, cand.BoxID)
			if err != nil {
				return err
			}
			sn, err := s.k.SnapshotLock(ctx, tx, cand.ID)
			if err != nil {
				return err
			}
			pins, err := s.k.Pins(ctx, tx, sn.ID, "")
			if err != nil {
				return err
			}
			if err := snapshots.Eligible(sn, snapshots.ChangeExpire, pins, s.now(), tz); err != nil {
				return err
			}
			op, err = s.k.Admit(ctx, tx, snapshots.OpRequest{Kind: snapshots.OpExpiry, Box: b, Target: sn, Pins: []string{sn.ID}, Caller: snapshots.System(whyKeepEnded)})
			return err
		})
		var r *snapshots.Refusal
		switch {
		case errors.As(err, &r), errors.Is(err, store.ErrNotFound):
			continue // in use, or kept longer meanwhile: the next sweep asks again
		case err != nil:
			return ops, fmt.Errorf("expiry of %s: %w", cand.ID, err)
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// RoomReport says what the room sweep found and deleted.
type RoomReport struct {
	Checked []RoomChecked
	Deleted []string // snapshot IDs
	Skipped []string // candidates eligible refused at the moment, or whose box was busy
}

// RoomChecked is one storage the room sweep read.
type RoomChecked struct {
	Backend, Host, Storage string
	PercentFull            float64
	MetadataPercentFull    *float64
}

// RoomSweep reads each storage that holds ready snapshots through a plan,
// to make room on each host afterwards, and, past the room setting
// plus SweepAboveRoom points (or its metadata past the setting plus 2),
// deletes agents' snapshots on that storage that nobody kept, oldest first,
// each checked by eligible(evict-room) at the moment of its delete, logging
// "by boxsnap: pve-1's storage was 93% full". It stops on a storage once it
// is back under the line. It reads every backend this process reaches but
// never another host's storage or boxes (elsewhere): those each other host
// sweeps itself (RoomSweepHere).
func (s *Sweeps) RoomSweep(ctx context.Context) (RoomReport, error) {
	return s.roomSweep(ctx, false)
}

// RoomSweepHere is the room sweep of this host's one-host backends alone
// (snapshots.Backend.OneHost: the local folder, QEMU, a local Docker
// engine): only this host reads their storage, so each host runs it on
// its own queue, while the room sweep River's leader runs reads the
// leader's own and the backends every host reaches.
func (s *Sweeps) RoomSweepHere(ctx context.Context) (RoomReport, error) {
	return s.roomSweep(ctx, true)
}

func (s *Sweeps) roomSweep(ctx context.Context, oneHostOnly bool) (RoomReport, error) {
	var rep RoomReport
	settings, err := s.k.Settings(ctx)
	if err != nil {
		return rep, err
	}
	line := float64(settings.RoomPercent + snapshots.SweepAboveRoom)
	metaLine := float64(settings.RoomPercent - snapshots.MetadataBelowRoom + snapshots.SweepAboveRoom)
	places, err := s.st.SweepStorages(ctx, s.st.Pool)
	if err != nil {
		return rep, fmt.Errorf("room sweep: %w", err)
	}
	done := map[string]bool{}
	ows := map[string]*owners{}
	for _, p := range places {
		key := p.BackendID + "/" + p.Host + "/" + p.Storage
		if done[key] {
			continue
		}
		be, ok := s.backends[p.BackendID]
		if !ok || (oneHostOnly && !be.OneHost()) {
			continue
		}
		o, read := ows[be.ID]
		if !read {
			if o, err = s.ownersOf(ctx, be); err != nil {
				return rep, fmt.Errorf("room sweep: %w", err)
			}
			ows[be.ID] = o
		}
		if s.elsewhere(be, p.Host, p.BoxID, o) {
			continue
		}
		b, err := s.k.BoxByID(ctx, s.st.Pool, p.BoxID)
		if err != nil {
			continue
		}
		plan, err := be.Snap.PlanSnapshots(ctx, snapshots.GuestOf(b), nil)
		if plan.Storage.Name == "" {
			if err != nil {
				s.logger.Warn("room sweep: plan", "box", b.ID, "err", err)
			}
			continue // another box on the storage may plan
		}
		done[key] = true
		full := plan.Storage.PercentFull
		rep.Checked = append(rep.Checked, RoomChecked{Backend: p.BackendID, Host: p.Host, Storage: p.Storage, PercentFull: full, MetadataPercentFull: plan.Storage.MetadataPercentFull})
		meta := plan.Storage.MetadataPercentFull
		if full <= line && (meta == nil || *meta <= metaLine) {
			continue
		}
		why := whyStorageFullWords(p.Host, full)
		if full <= line {
			why = whyMetadataFullWords(p.Host, *meta)
		}
		if err := s.evictRoom(ctx, be, p.Host, p.Storage, o, why, line, metaLine, &rep); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// evictRoom deletes candidates on one storage, oldest first, until a plan
// says it is under the line again; never another host's (o).
func (s *Sweeps) evictRoom(ctx context.Context, be snapshots.Backend, host, storage string, o *owners, why string, line, metaLine float64, rep *RoomReport) error {
	cands, err := snapshots.SnapshotRows(s.st.SweepRoomCandidates(ctx, s.st.Pool, db.SweepRoomCandidatesParams{BackendID: be.ID, Host: host, Storage: storage}))
	if err != nil {
		return fmt.Errorf("room sweep: %w", err)
	}
	for _, cand := range cands {
		if s.elsewhere(be, cand.Host, cand.BoxID, o) {
			continue
		}
		deleted, err := s.deleteForRoom(ctx, cand.ID, why)
		if err != nil {
			return err
		}
		if !deleted {
			rep.Skipped = append(rep.Skipped, cand.ID)
			continue
		}
		rep.Deleted = append(rep.Deleted, cand.ID)
		b, err := s.k.BoxByID(ctx, s.st.Pool, cand.BoxID)
		if err != nil {
			continue
		}
		plan, _ := be.Snap.PlanSnapshots(ctx, snapshots.GuestOf(b), nil)
		if plan.Storage.Name != "" && plan.Storage.PercentFull <= line &&
			(plan.Storage.MetadataPercentFull == nil || *plan.Storage.MetadataPercentFull <= metaLine) {
			return nil
		}
	}
	return nil
}

// errBoxBusy says the room sweep left a box whose turn was taken.
var errBoxBusy = errors.New("another operation runs on the box")

// deleteForRoom deletes one snapshot as an operation of its box, admitted
// while the box's turn is free and run by a worker as any delete is:
// recorded before it starts, eligible(evict-room) asked at the moment of
// the change, its Proxmox task left to the job's snooze, the box log saying
// why. The sweep waits for its end (through the process's one listener,
// holding no connection of its own) before it reads the storage again. A
// box busy with another operation is skipped until the next sweep.
func (s *Sweeps) deleteForRoom(ctx context.Context, id, why string) (bool, error) {
	var op *snapshots.Operation
	err := store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		sn, err := s.k.SnapshotByID(ctx, tx, id)
		if err != nil {
			return err
		}
		b, err := s.k.LockBox(ctx, tx, sn.BoxID)
		if err != nil {
			return err
		}
		active, err := s.ops.ActiveOnBox(ctx, tx, b.ID, "")
		if err != nil {
			return err
		}
		if active > 0 {
			return errBoxBusy
		}
		sn, err = s.k.SnapshotLock(ctx, tx, id)
		if err != nil {
			return err
		}
		pins, err := s.k.Pins(ctx, tx, sn.ID, "")
		if err != nil {
			return err
		}
		if err := snapshots.Eligible(sn, snapshots.ChangeEvictRoom, pins, s.now(), s.k.TimeZone(ctx)); err != nil {
			return err
		}
		op, err = s.k.Admit(ctx, tx, snapshots.OpRequest{Kind: snapshots.OpDelete, Box: b, Target: sn, Pins: []string{sn.ID}, Caller: snapshots.System(why),
			Params: snapshots.DeleteParams{Change: snapshots.ChangeEvictRoom, Why: why}})
		return err
	})
	var r *snapshots.Refusal
	if errors.As(err, &r) || errors.Is(err, errBoxBusy) || errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("room sweep: %w", err)
	}
	got, err := s.ops.Wait(ctx, op.ID)
	if err != nil {
		return false, fmt.Errorf("room sweep: %w", err)
	}
	if got.State != snapshots.OpDone {
		return false, ctx.Err() // refused at the moment, or failed: skipped
	}
	res, err := s.snaps.DeleteResult(got)
	return err == nil && res.Name != "", nil // no name: it was gone already
}
