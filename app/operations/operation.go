package operations

import (
	"encoding/json"
	"time"

	"github.com/riverqueue/river"

	"github.com/boxsnap/boxsnap/app/ids"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// Operation is one operation's row.
type Operation struct {
	ID         string          `db:"id" json:"id"`
	Seq        int64           `db:"seq" json:"-"`
	RequestKey *string         `db:"request_key" json:"-"`
	Kind       string          `db:"kind" json:"kind"`
	BoxID      *string         `db:"box_id" json:"box,omitempty"`
	Generation int             `db:"generation" json:"generation"`
	Target     *string         `db:"target" json:"target,omitempty"`
	Snapshots  []string        `db:"snapshots" json:"snapshots"`
	ByKind     string          `db:"by_kind" json:"byKind"`
	ByThreadID *string         `db:"by_thread_id" json:"byThread,omitempty"`
	Consent    json.RawMessage `db:"consent" json:"consent,omitempty"`
	UndoID     *string         `db:"undo_id" json:"undo,omitempty"`
	Guests     json.RawMessage `db:"guests" json:"guests,omitempty"`
	Step       string          `db:"step" json:"step"`
	Task       json.RawMessage `db:"task" json:"task,omitempty"`
	State      string          `db:"state" json:"state"`
	Reserved   json.RawMessage `db:"reserved" json:"reserved,omitempty"`
	Params     json.RawMessage `db:"params" json:"-"`
	Result     json.RawMessage `db:"result" json:"result,omitempty"`
	Error      *string         `db:"error" json:"error,omitempty"`
	Observed   *string         `db:"observed" json:"observed,omitempty"`
	Resumes    int             `db:"resumes" json:"-"`
	CreatedAt  time.Time       `db:"created_at" json:"createdAt"`
	StartedAt  *time.Time      `db:"started_at" json:"startedAt,omitempty"`
	EndedAt    *time.Time      `db:"ended_at" json:"endedAt,omitempty"`
	// TaskWaiting says the job snoozed while Task runs.
	TaskWaiting bool `db:"task_waiting" json:"-"`
	// BoxRan is whether a restore's box ran just before the restore
	// stopped it (StepBoxRan), nil where it was not read.
	BoxRan *bool `db:"box_ran" json:"-"`

	// Resuming is set for a run that goes on from a step an earlier run
	// reached: after a restart, or after a provider task the job snoozed on.
	Resuming bool `db:"-" json:"-"`
	// TaskEnded is what the provider said of the task this run waited for,
	// when the run follows a snooze on it.
	TaskEnded *providers.TaskOutcome `db:"-" json:"-"`
}

// An operation's states.
const (
	Running = "running"
	Done    = "done"
	Failed  = "failed"
	Unknown = "unknown"
)

// The engine's own steps; every other step is its kind's.
const (
	StepWaiting = "waiting" // asked; an earlier operation of the box runs
	StepQueued  = "queued"  // its job is in River's queue
)

// Queue is the River queue operations run on.
const Queue = "operations"

// Args is the River job of one operation. Its unique key is the box, the
// operation and the resume count, so a repeat never runs twice; a resume
// after a crash is a new attempt with its own key. The operation's advisory
// lock makes sure one worker runs it at a time. OpKind is the operation's
// kind, so its run can start with its kind's own start (RegisterStarting); a
// job of none starts with the engine's.
type Args struct {
	Box    string `json:"box" river:"unique"`
	Op     string `json:"op" river:"unique"`
	Resume int    `json:"resume" river:"unique"`
	OpKind string `json:"kind,omitempty"`
}

// Kind is the job's stable name.
func (Args) Kind() string { return "operation" }

// InsertOpts puts operations on their queue, unique by their args.
func (Args) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, MaxAttempts: 10, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// Prefix starts every operation's ID ("op" and 12 letters and digits).
const Prefix = "op"

// NewID makes an operation's ID.
func NewID() string { return ids.New(Prefix) }

// ValidID reports whether s is an operation's ID.
func ValidID(s string) bool { return ids.Valid(Prefix, s) }

// FromRow is the operation of a row of operations, as sqlc's queries
// answer it.
func FromRow(r db.Operation) *Operation {
	return &Operation{ID: r.ID, Seq: r.Seq, RequestKey: r.RequestKey, Kind: r.Kind, BoxID: r.BoxID, Generation: r.Generation,
		Target: r.Target, Snapshots: r.Snapshots, ByKind: r.ByKind, ByThreadID: r.ByThreadID, Consent: r.Consent,
		UndoID: r.UndoID, Guests: r.Guests, Step: r.Step, Task: r.Task, State: r.State, Reserved: r.Reserved,
		Params: r.Params, Result: r.Result, Error: r.Error, Observed: r.Observed, Resumes: r.Resumes,
		CreatedAt: r.CreatedAt, StartedAt: r.StartedAt, EndedAt: r.EndedAt, TaskWaiting: r.TaskWaiting, BoxRan: r.BoxRan}
}
