package snapshots

import (
	"context"
	"encoding/json"
	"time"

	"github.com/boxsnap/boxsnap/app/store/db"
)

// Box log event kinds.
const (
	EvSnapshotTaken        = "snapshot-taken"
	EvSnapshotFailed       = "snapshot-failed"
	EvRestoreAsked         = "restore-asked"
	EvRestored             = "restored"
	EvRestoreFailed        = "restore-failed"
	EvRestoredOutside      = "restored-outside"
	EvRestoreOutsideFailed = "restore-outside-failed"
	EvRestoreOutsideRun    = "restore-outside-running"
	EvChangedOutside       = "snapshots-changed-outside"
	EvForkAsked            = "fork-asked"
	EvForked               = "forked"
	EvForkFailed           = "fork-failed"
	EvSnapshotDeleted      = "snapshot-deleted"
	EvSnapshotKept         = "snapshot-kept"
	EvSnapshotUnkept       = "snapshot-unkept"
	EvSnapshotLost         = "snapshot-lost"
	EvSnapshotUnavailable  = "snapshot-unavailable"
	EvSnapshotFound        = "snapshot-found"
	EvHeldCopyMade         = "held-copy-made"
	EvHeldCopyStarted      = "held-copy-started"
	EvMade                 = "made"
	EvReleased             = "released"
)

// EvGuestGone is the box log's event for a guest the reconcile found gone.
const EvGuestGone = "guest-gone"

// The box log's events of a request for the person's word: asked, and
// declined (an approved one's restore logs its own events).
const (
	EvRestoreRequested = "restore-requested"
	EvRestoreDeclined  = "restore-declined"
)

// BoxLogKeep is how many events a box's log keeps; housekeeping prunes the
// rest ("bounded and pruned", as 069).
const BoxLogKeep = 1000

// LogEvent is one box log event, a row of box_log as it is (db.BoxLog
// converts to it).
type LogEvent struct {
	ID          int64           `json:"id"`
	BoxID       string          `json:"box"`
	At          time.Time       `json:"at"`
	Kind        string          `json:"kind"`
	ActorKind   string          `json:"actorKind"`
	ActorThread *string         `json:"actorThread,omitempty"`
	ActorWhy    *string         `json:"actorWhy,omitempty"`
	Words       string          `json:"words"`
	SnapshotID  *string         `json:"snapshot,omitempty"`
	OperationID *string         `json:"operation,omitempty"`
	Data        json.RawMessage `json:"data,omitempty"`
}

// NilIfEmpty is s, or nil for "", for a column that holds NULL for none.
func NilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Log records one box log event. A failure to log is itself logged and does
// not undo the change it describes.
func (s *BoxLog) Log(ctx context.Context, q db.DBTX, box, kind string, c Caller, words, snapshot, op string, data any) {
	var raw []byte
	if data != nil {
		var err error
		if raw, err = json.Marshal(data); err != nil {
			s.logger.Error("box log: its data", "box", box, "kind", kind, "err", err)
		}
	}
	if err := s.st.CoreLogInsert(ctx, q, db.CoreLogInsertParams{BoxID: box, Kind: kind, ActorKind: c.ByKind(), ActorThread: c.thread(),
		ActorWhy: NilIfEmpty(c.Why), Words: words, SnapshotID: NilIfEmpty(snapshot), OperationID: NilIfEmpty(op), Data: raw}); err != nil {
		s.logger.Error("box log", "box", box, "kind", kind, "err", err)
		return
	}
	// Every logged change tells the pages that show the box, at q's commit.
	if err := s.ops.BoxChanged(ctx, q, box); err != nil {
		s.logger.Error("box log: telling the pages", "box", box, "kind", kind, "err", err)
	}
}
