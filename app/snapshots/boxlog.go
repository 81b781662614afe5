package snapshots

import (
	"context"
	"encoding/json"
	"fmt"
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

func NilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// log records one box log event. A failure to log is itself logged and does
// not undo the change it describes.
func (s *Kernel) Log(ctx context.Context, q db.DBTX, box, kind string, c Caller, words, snapshot, op string, data any) {
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

// BoxLog reads a box's log, newest first, as the caller may see it: an agent
// reads only the events of its own thread's actions and boxsnap's.
func (s *Boxes) BoxLog(ctx context.Context, c Caller, boxRef string, limit int) ([]LogEvent, error) {
	b, err := s.Box(ctx, c, boxRef)
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > BoxLogKeep {
		limit = 200
	}
	rows, err := s.st.CoreLogOfBox(ctx, s.st.Pool, db.CoreLogOfBoxParams{BoxID: b.ID, MaxRows: limit})
	if err != nil {
		return nil, fmt.Errorf("read box log: %w", err)
	}
	all := make([]LogEvent, len(rows))
	for i, r := range rows {
		all[i] = LogEvent(r)
	}
	if c.Kind != CallerAgent {
		return all, nil
	}
	var out []LogEvent
	for _, e := range all {
		if e.ActorKind == "agent" && (e.ActorThread == nil || *e.ActorThread != c.Thread) {
			continue
		}
		out = append(out, e)
	}
	return out, nil
}
