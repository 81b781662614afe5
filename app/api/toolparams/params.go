package toolparams

// SnapshotParams are box_snapshot's parameters.
type SnapshotParams struct {
	Box    string `json:"box"`
	Name   string `json:"name"`
	Note   string `json:"note"`
	Memory bool   `json:"memory"`
	// Request is an ID the caller makes, so a repeat is the same take.
	Request string `json:"request"`
}

// SnapshotsParams are box_snapshots' parameters.
type SnapshotsParams struct {
	Box      string `json:"box"`
	Pictures bool   `json:"pictures"`
	// Automatic, when set, lists only automatic snapshots (true) or only
	// saved ones (false).
	Automatic *bool `json:"automatic,omitempty"`
}

// RestoreParams are box_restore's parameters. Replace is a
// pointer so that a missing one is told apart from false.
type RestoreParams struct {
	Box      string `json:"box"`
	Snapshot string `json:"snapshot"`
	Replace  *bool  `json:"replace"`
	// Request is an ID the agent makes, so a repeat is the same restore.
	Request string `json:"request"`
	// DryRun answers what the restore would change and the plan's words,
	// and changes nothing.
	DryRun bool `json:"dry_run"`
}

// ForkToolParams are box_fork's parameters.
type ForkToolParams struct {
	// Snapshot is the snapshot to fork, by name or ID; empty forks the box
	// now, from a snapshot taken first.
	Snapshot string `json:"snapshot"`
	// Box is the snapshot's box (needed for a snapshot's name), or the box
	// to fork now when Snapshot is empty.
	Box string `json:"box"`
	// Name is the new box's name; empty makes one.
	Name string `json:"name"`
	// Request is an ID the caller makes, so a repeat is the same fork.
	Request string `json:"request"`
	// Count forks into that many boxes from one snapshot, each its own
	// box (toolForkMany); left out, one fork. Sent, it is 1 or more.
	Count *int `json:"count"`
}

// Forks is the count as the fork seam reads it: 0, one fork, when count
// is left out.
func (p ForkToolParams) Forks() int {
	if p.Count == nil {
		return 0
	}
	return *p.Count
}

// DeleteParams are box_snapshot_delete's parameters.
type DeleteParams struct {
	Box      string `json:"box"`
	Snapshot string `json:"snapshot"`
	Request  string `json:"request"`
	// DryRun answers what the delete would delete and free, and changes
	// nothing.
	DryRun bool `json:"dry_run"`
}

// SnapshotDiffParams are box_snapshot_diff's parameters.
type SnapshotDiffParams struct {
	Box      string `json:"box"`
	Snapshot string `json:"snapshot"`
	// Against is another snapshot of the same box; the box now when empty.
	Against string `json:"against"`
	// Path names a text file: the answer is its unified diff.
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

// SaveParams are box_snapshot_save's parameters: an automatic snapshot, and
// a name for it, optional.
type SaveParams struct {
	Box      string `json:"box"`
	Snapshot string `json:"snapshot"`
	Name     string `json:"name"`
	Request  string `json:"request"`
}

// UnsaveParams are box_snapshot_unsave's.
type UnsaveParams struct {
	Box      string `json:"box"`
	Snapshot string `json:"snapshot"`
	Request  string `json:"request"`
}

// ResetToolParams are box_reset's parameters: the box, Keep logins, and at
// most a box template's name. An agent never names a path, a source, a host
// or a login file.
type ResetToolParams struct {
	Box        string `json:"box"`
	KeepLogins bool   `json:"keep_logins"`
	Template   string `json:"template"`
	Request    string `json:"request"`
	// DryRun answers what the reset would do, and changes nothing.
	DryRun bool `json:"dry_run"`
}

// BoxToolParams are the parameters of a tool that names only a box.
type BoxToolParams struct {
	Box     string `json:"box"`
	Request string `json:"request"`
}

// ReleaseParams are box_release's parameters: a box of the agent's own
// thread. Only the person deletes kept snapshots with it, so an agent has
// no deleteKept.
type ReleaseParams struct {
	Box     string `json:"box"`
	Request string `json:"request"`
	// DryRun answers what the release would do (what goes, what stays, the
	// trash first), and changes nothing.
	DryRun bool `json:"dry_run"`
}

// UndoParams are box_undo's parameters.
type UndoParams struct {
	Box     string `json:"box"`
	Request string `json:"request"`
	// DryRun answers what the undo would change, and changes nothing.
	DryRun bool `json:"dry_run"`
}

// TrashToolParams are box_trash's parameters: none.
type TrashToolParams struct{}

// LookParams are box_snapshot_files' and box_snapshot_file's parameters: a
// snapshot, and a path inside it (its top folder when empty).
type LookParams struct {
	Box      string `json:"box"`
	Snapshot string `json:"snapshot"`
	Path     string `json:"path"`
}

// LineageParams are box_lineage's parameters: a box, and one of its
// snapshots, optional.
type LineageParams struct {
	Box      string `json:"box"`
	Snapshot string `json:"snapshot"`
}

// BoxListParams are box_list's parameters: none.
type BoxListParams struct{}

// BoxMakeParams are box_make's parameters: a box template's name, and the
// box's name, optional. An agent never names a backend, a host or a source.
type BoxMakeParams struct {
	Template string `json:"template"`
	Name     string `json:"name"`
	Request  string `json:"request"`
}

// HeadParams are box_head's parameters.
type HeadParams struct {
	Box      string `json:"box"`
	Snapshot string `json:"snapshot"`
	Request  string `json:"request"`
}

// OperationParams are box_operation's parameters: an operation's ID or a
// request's, and how many seconds to wait for it to end.
type OperationParams struct {
	Operation string `json:"operation"`
	Wait      int    `json:"wait"`
}
