package snapshots

import (
	"encoding/json"
	"time"

	"github.com/boxsnap/boxsnap/app/operations"
)

// Snapshot states.
const (
	StateTaking      = "taking"
	StateReady       = "ready"
	StateFailed      = "failed"
	StateIncomplete  = "incomplete"
	StateDeleting    = "deleting"
	StateUnavailable = "unavailable"
	StateLost        = "lost"
)

// transitions are the only state changes a snapshot may make; every state
// write goes through MoveState, which refuses any other.
var transitions = map[string][]string{
	StateTaking:      {StateReady, StateFailed, StateIncomplete},
	StateReady:       {StateDeleting, StateUnavailable, StateLost},
	StateDeleting:    {StateIncomplete}, // gone: the record goes
	StateUnavailable: {StateReady, StateDeleting},
	StateIncomplete:  {StateDeleting},
	StateLost:        {StateDeleting},
	StateFailed:      {StateDeleting},
}

// CanMove reports whether a snapshot may go from one state to another.
func CanMove(from, to string) bool {
	for _, t := range transitions[from] {
		if t == to {
			return true
		}
	}
	return false
}

// Box is a box boxsnap manages.
type Box struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Kind       string          `json:"kind"`
	System     string          `json:"system,omitempty"`
	ThreadID   *string         `json:"thread,omitempty"`
	BackendID  string          `json:"backend"`
	Host       string          `json:"host,omitempty"`
	GuestRef   string          `json:"guestRef"`
	Generation int             `json:"generation"`
	HasScreen  bool            `json:"hasScreen"`
	ScreenURL  string          `json:"-"`
	Presence   Presence        `json:"presence"`
	ForkedFrom json.RawMessage `json:"forkedFrom,omitempty"`
	State      BoxState        `json:"state"`
	CreatedAt  time.Time       `json:"createdAt"`
	ReleasedAt *time.Time      `json:"releasedAt,omitempty"`
	// HeadID is the snapshot the box's current state descends from: it moves
	// forward by itself on a take and back only by a restore. The API gives
	// it through the lineage, as the caller may see it.
	HeadID *string `json:"-"`
}

// Presence is what the platform that runs agents reports about a box: which
// threads have a workspace on it and whether they work, who holds its
// desktop, and how many terminals are open.
type Presence struct {
	Workspaces []Workspace `json:"workspaces,omitempty"`
	Desktop    string      `json:"desktop,omitempty"`   // who holds the desktop's control, or ""
	Terminals  int         `json:"terminals,omitempty"` // open terminals
}

// Workspace is one thread's workspace on a box.
type Workspace struct {
	Thread  string `json:"thread"`
	Working bool   `json:"working"`
	// RunsOn is set when the thread runs on this box: the box is then an
	// execution machine.
	RunsOn bool `json:"runsOn,omitempty"`
}

// Thread is a thread registered in boxsnap; its agent calls the tools with
// the thread's bearer token.
type Thread struct {
	ID        string     `json:"id"`
	Title     string     `json:"title"`
	CreatedAt time.Time  `json:"createdAt"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
}

// Snapshot is boxsnap's record of one snapshot, its fields in the order of
// the snapshots table's columns (a row of db.Snapshot converts to it:
// rows.go).
type Snapshot struct {
	ID              string          `json:"id"`
	BoxID           string          `json:"box"`
	BoxName         string          `json:"boxName"`
	BoxKind         string          `json:"boxKind"`
	BoxSystem       string          `json:"boxSystem,omitempty"`
	BoxThreadID     *string         `json:"boxThread,omitempty"`
	BoxGoneAt       *time.Time      `json:"boxGoneAt,omitempty"`
	BoxGoneHow      *string         `json:"boxGoneHow,omitempty"`
	BackendID       string          `json:"backend"`
	Host            string          `json:"host,omitempty"`
	Storage         string          `json:"storage,omitempty"`
	StorageType     string          `json:"storageType,omitempty"`
	Guest           string          `json:"guest"`
	GuestGeneration int             `json:"-"`
	Name            string          `json:"name"`
	Note            *string         `json:"note,omitempty"`
	TakenAt         time.Time       `json:"takenAt"`
	CapturedAt      *time.Time      `json:"capturedAt,omitempty"`
	TookMs          *int            `json:"tookMs,omitempty"`
	PausedMs        *int            `json:"pausedMs,omitempty"`
	ByKind          string          `json:"byKind"`
	ByThreadID      *string         `json:"byThread,omitempty"`
	ByWhy           *string         `json:"-"`
	Scope           string          `json:"scope"`
	Holds           string          `json:"holds"`
	Excludes        *string         `json:"excludes,omitempty"`
	SizeBytes       *int64          `json:"sizeBytes,omitempty"`
	SizeMeaning     *string         `json:"sizeMeaning,omitempty"`
	Price           json.RawMessage `json:"price,omitempty"`
	OwnerKind       string          `json:"ownerKind"`
	OwnerThreadID   *string         `json:"-"`
	KeptUntil       *time.Time      `json:"keptUntil,omitempty"`
	KeptAt          *time.Time      `json:"keptAt,omitempty"`
	UndoOf          *string         `json:"undoOf,omitempty"`
	ForkSafe        *int            `json:"forkSafe,omitempty"`
	DependsOn       []string        `json:"dependsOn,omitempty"`
	Picture         string          `json:"picture"`
	Ref             string          `json:"-"`
	State           string          `json:"state"`
	Error           *string         `json:"error,omitempty"`
	Found           bool            `json:"found,omitempty"`
	MissingSince    *time.Time      `json:"-"`
	StateAt         time.Time       `json:"-"`
	// GuestRef is the guest that holds the snapshot when it is not its box's
	// current guest: its held copy, or the box's earlier guest (a VMID).
	GuestRef *string `json:"-"`
	// ParentID is what the snapshot was taken from: the box's head at the
	// take (after a restore, the snapshot the box was restored to). The API
	// gives it through the lineage, as the caller may see it.
	ParentID *string `json:"-"`
	// Automatic is set on a snapshot boxsnap took by itself because the box
	// changed: not counted in the per-box limit, never an undo, thinned,
	// until Save makes it an ordinary one.
	Automatic bool `json:"automatic"`
}

// Kept reports whether the person keeps the snapshot.
func (s *Snapshot) Kept() bool { return s.KeptUntil != nil }

// IsUndo reports whether the snapshot is a restore's undo that still counts
// apart: a kept undo is an ordinary kept snapshot.
func (s *Snapshot) IsUndo() bool { return s.UndoOf != nil && !s.Kept() }

// Operation is one change, recorded before it starts: its kind, box,
// snapshots, step and state; the engine (app/operations) owns its row.
type Operation = operations.Operation

// PinTarget is the snapshot an operation targets (a restore's, a fork's,
// a delete's or a keep's), or "" for one that targets none.
func PinTarget(op *Operation) string {
	if op.Target != nil {
		return *op.Target
	}
	return ""
}

// Operation kinds.
const (
	OpTake    = "take"
	OpRestore = "restore"
	OpDelete  = "delete"
	OpKeep    = "keep"
	OpUnkeep  = "unkeep"
	OpExpiry  = "expiry"
	OpFork    = "fork"
	OpRelease = "release"
	OpImport  = "import"
)

// Operation states.
const (
	OpRunning = operations.Running
	OpDone    = operations.Done
	OpFailed  = operations.Failed
	OpUnknown = operations.Unknown
)

// Steps an operation records before it runs them, beside the restore steps
// of providers.RestoreStep.
const (
	StepWaiting  = operations.StepWaiting
	StepQueued   = operations.StepQueued
	StepPlan     = "plan"     // reading the plan again at the moment of the change
	StepPicture  = "picture"  // taking the screen's picture
	StepSnapshot = "snapshot" // the backend takes the snapshot
	StepLimit    = "limit"    // deleting what the per-box limit replaces
	StepDelete   = "delete"   // the backend deletes
	StepLabel    = "label"    // the backend's label changes (keep)
	StepRecord   = "record"   // boxsnap's record changes
	StepRelease  = "release"  // the backend releases the guest
	StepUndos    = "undos"    // replacing older undos after a restore
	StepPublish  = "publish"  // the backend publishes an import's snapshots
	StepBox      = "box"      // making the box an import brought here
	StepClean    = "clean"    // an import's records are written; its staged files go
	StepDone     = "done"
)
