package providers

import "time"

// Holds says what a restore brings back.
type Holds string

// What a snapshot holds.
const (
	HoldsDisk          Holds = "disk"
	HoldsDiskAndMemory Holds = "disk-and-memory"
)

// WhileRunning says what a take does to a running box.
type WhileRunning string

// How a take treats a running box.
const (
	WhileRunningLive        WhileRunning = "live"
	WhileRunningPauses      WhileRunning = "pauses"
	WhileRunningSuspends    WhileRunning = "suspends"
	WhileRunningStoppedOnly WhileRunning = "stopped-only"
)

// RestoreKind says how a backend restores.
type RestoreKind string

// How a backend restores.
const (
	RestoreInPlace  RestoreKind = "in-place"
	RestoreNewGuest RestoreKind = "new-guest"
	RestoreNone     RestoreKind = "none"
)

// ForkKind says how a backend forks.
type ForkKind string

// How a backend forks.
const (
	ForkCopy ForkKind = "copy"
	// ForkShared: forks of one snapshot share one read-only copy of its
	// files, each holding only what it changes.
	ForkShared ForkKind = "shared"
	ForkNone   ForkKind = "none"
)

// KeepsPastRelease says how a kept snapshot outlives its box.
type KeepsPastRelease string

// How a kept snapshot outlives its box's release.
const (
	KeepsAsIs     KeepsPastRelease = "as-is"
	KeepsHeldCopy KeepsPastRelease = "held-copy"
	KeepsNo       KeepsPastRelease = "no"
)

// Lives says where a backend's snapshots are kept.
type Lives string

// Where snapshots live.
const (
	LivesHost     Lives = "host"
	LivesProvider Lives = "provider"
)

// Scope says what a snapshot restores: the whole box, or a device in it.
type Scope string

// What a snapshot restores.
const (
	ScopeBox    Scope = "box"
	ScopeDevice Scope = "device"
)

// Price is a provider's price for holding a snapshot. A price that is not
// Known is shown as unknown, never as free.
type Price struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"` // "USD" or "EUR"
	Per      string  `json:"per"`      // "day", "month" or "GB-month"
	Known    bool    `json:"known"`
}

// Snapshotting is what a backend offers for a kind of box, known with no call
// to a host.
type Snapshotting struct {
	Scope            Scope            `json:"scope"`
	Holds            []Holds          `json:"holds"`
	WhileRunning     WhileRunning     `json:"whileRunning"`
	Restore          RestoreKind      `json:"restore"`
	Fork             ForkKind         `json:"fork"`
	KeepsPastRelease KeepsPastRelease `json:"keepsPastRelease"`
	Lives            Lives            `json:"lives"`
	Price            *Price           `json:"price"`
	Excludes         string           `json:"excludes,omitempty"` // "/tmp, caches, SSH host keys"
}

// OffersMemory reports whether the kind can take a disk-and-memory snapshot.
func (s *Snapshotting) OffersMemory() bool {
	if s == nil {
		return false
	}
	for _, h := range s.Holds {
		if h == HoldsDiskAndMemory {
			return true
		}
	}
	return false
}

// Guest is one box's guest on a backend: where the box lives now.
type Guest struct {
	Backend string `json:"backend"` // the backend's ID
	Kind    string `json:"kind"`    // the box's kind, such as "linux" or "lxc"
	Host    string `json:"host"`    // the host or node, such as "pve-1"
	Ref     string `json:"ref"`     // the backend's reference, such as a VMID or a folder name
	// Generation counts the box's guests: a swap gives the box a new guest.
	Generation int `json:"generation"`
}

// SnapshotRef names one snapshot for a backend: boxsnap's ID and the
// backend's own reference, opaque to the core.
type SnapshotRef struct {
	ID      string `json:"id"`  // boxsnap's ID, "sn" and 12 letters and digits
	Ref     string `json:"ref"` // the backend's reference
	Guest   Guest  `json:"guest"`
	Storage string `json:"storage,omitempty"`
	// Where is "current", "earlier" or "held-copy".
	Where string `json:"where,omitempty"`
}

// Label is what a backend writes on a snapshot so that it is found again
// after boxsnap's records are lost: IDs and dates only, never a name, a note
// or a secret.
type Label struct {
	Install  string `json:"install"`
	Box      string `json:"box"`
	Snapshot string `json:"snapshot"`
	// KeptUntil is the end of the UTC day the snapshot is kept until, or nil.
	KeptUntil *time.Time `json:"keptUntil,omitempty"`
	// ResetVersion is the identity reset's version found in the box at the
	// take, or 0 when it had none.
	ResetVersion int `json:"resetVersion,omitempty"`
	// Held is set on a held copy: the backend reference of the snapshot it
	// copies, or "guest" for a copy of the stopped guest (ZFS's undo).
	// SnapshotAt is then the snapshot's time and Kind the box's kind, so a
	// copy found again after the records are lost still forks.
	Held       string     `json:"held,omitempty"`
	SnapshotAt *time.Time `json:"snapshotAt,omitempty"`
	Kind       string     `json:"kind,omitempty"`
}

// SnapshotTake asks for one snapshot.
type SnapshotTake struct {
	Label  Label
	Memory bool // disk and memory; only where Snapshotting offers it
	// RoomPercent is the room setting ("Refuse new snapshots when a host's
	// storage is past"): a backend that learns the copy's size only once it
	// has read the box refuses the take then, when the copy would take its
	// storage past it. 0 refuses only a copy that does not fit.
	RoomPercent int
}

// Size is a snapshot's size and what it means.
type Size struct {
	Bytes int64 `json:"bytes"`
	// Meaning is "own" (what deleting it frees) or "whole" (what it holds,
	// some shared with the box).
	Meaning string `json:"meaning"`
}

// SnapshotTaken is what a backend answers for a confirmed take.
type SnapshotTaken struct {
	Ref        string
	Storage    string
	CapturedAt time.Time // the moment the state is from
	Holds      Holds
	Size       *Size // nil: unknown
	Excludes   string
	// ResetVersion is the identity reset's version read in the box at the
	// take, or 0 (not fork-safe).
	ResetVersion int
	// Paused is how long the box was paused for the take, where it pauses.
	Paused time.Duration
	// Parent is the backend reference of the snapshot this one was taken
	// after, where the backend keeps a chain.
	Parent string
}

// BoxSize is a box's size as a restore reads it back.
type BoxSize struct {
	Cores       int   `json:"cores,omitempty"`
	MemoryBytes int64 `json:"memoryBytes,omitempty"`
	DiskBytes   int64 `json:"diskBytes,omitempty"`
	// SharedBytes is what the box lies over and shares with other boxes
	// (a local fork's snapshot's shared tree), beside DiskBytes, which is
	// then what it alone holds.
	SharedBytes int64 `json:"sharedBytes,omitempty"`
}

// Storage is what a plan reads of where snapshots live.
type Storage struct {
	Name                string   `json:"name"`
	Type                string   `json:"type"`
	PercentFull         float64  `json:"percentFull"`
	MetadataPercentFull *float64 `json:"metadataPercentFull"`
	FreeBytes           int64    `json:"freeBytes"`
}

// TakePlan says whether a take can run now and what it would cost.
type TakePlan struct {
	OK            bool          `json:"ok"`
	Why           string        `json:"why,omitempty"`
	TryAgain      bool          `json:"tryAgain,omitempty"` // the refusal holds only for now
	About         time.Duration `json:"about"`
	MemoryAbout   time.Duration `json:"memoryAbout,omitempty"`
	AddsBytes     *int64        `json:"addsBytes"`
	MemoryBytes   *int64        `json:"memoryBytes,omitempty"`
	PauseAbout    time.Duration `json:"pauseAbout,omitempty"`
	ResetVersion  int           `json:"resetVersion,omitempty"`
	ForkSafeWhy   string        `json:"forkSafeWhy,omitempty"`
	ScreenCapture bool          `json:"screenCapture,omitempty"`
}

// RestoreWay is how a restore to one snapshot would run.
type RestoreWay string

// The ways a restore runs.
const (
	WayRollback           RestoreWay = "rollback"
	WayRollbackNewestOnly RestoreWay = "rollback-newest-only"
	WayNewGuest           RestoreWay = "new-guest"
	WayNone               RestoreWay = "none"
)

// UndoKind is what a restore's undo would be.
type UndoKind string

// The kinds of undo.
const (
	UndoSnapshot    UndoKind = "snapshot"
	UndoHeldCopy    UndoKind = "held-copy"
	UndoSuspendCopy UndoKind = "suspend-copy"
	UndoNone        UndoKind = "none"
)

// RestoreStep is one step of a restore, in a backend's capture order.
type RestoreStep string

// The steps of a restore. StepUndo is the core's own take of the undo.
const (
	StepStop     RestoreStep = "stop"
	StepUndo     RestoreStep = "undo"
	StepRollback RestoreStep = "rollback"
	StepStart    RestoreStep = "start"
	StepReadSize RestoreStep = "read-size"
)

// RestorePlan says whether a restore to the plan's snapshot can run and how.
type RestorePlan struct {
	Way               RestoreWay    `json:"way"`
	Why               string        `json:"why,omitempty"`
	TryAgain          bool          `json:"tryAgain,omitempty"`
	Undo              UndoKind      `json:"undo"`
	UndoAbout         time.Duration `json:"undoAbout"`
	UndoBytes         *int64        `json:"undoBytes"`
	SizeBack          *BoxSize      `json:"sizeBack"`
	LeavesOnEarlier   int           `json:"leavesOnEarlierGuest"`
	Order             []RestoreStep `json:"order"`
	Excludes          string        `json:"excludes,omitempty"`
	RestartsProcesses bool          `json:"restartsProcesses"`
}

// KeepPlan says what keeping the snapshot past its box's release costs.
type KeepPlan struct {
	Way   KeepsPastRelease `json:"way"`
	Why   string           `json:"why,omitempty"`
	About *time.Duration   `json:"about"`
	Bytes *int64           `json:"bytes"`
	Price *Price           `json:"price"`
}

// ForkPlan says whether a fork of the snapshot can be made and what it costs.
type ForkPlan struct {
	OK    bool          `json:"ok"`
	Why   string        `json:"why,omitempty"`
	About time.Duration `json:"about"`
	Bytes *int64        `json:"bytes"`
	// Shared says that forks of one snapshot share its files on the
	// host: Bytes is held once however many forks are made, each fork
	// holding only what it changes.
	Shared bool `json:"shared,omitempty"`
	// EachBytes is what every fork takes on the host at once besides its
	// files, however they are shared (a local box's own disk image), or
	// nil where nothing is.
	EachBytes *int64 `json:"eachBytes,omitempty"`
}

// Lock is a lock a host left on a guest, with the command that clears it.
type Lock struct {
	Lock string `json:"lock"` // "snapshot", "rollback", "backup", ...
	Fix  string `json:"fix"`  // "Run pct unlock 214 on pve-1"
}

// SnapshotPlan is what a backend would do for one box and one snapshot, read
// live before anything changes.
type SnapshotPlan struct {
	Storage Storage     `json:"storage"`
	Take    TakePlan    `json:"take"`
	Restore RestorePlan `json:"restore"`
	Keep    KeepPlan    `json:"keep"`
	Fork    ForkPlan    `json:"fork"`
	Locked  *Lock       `json:"locked"`
	// Size is the box's size now.
	Size *BoxSize `json:"size"`
}

// RestoreProgress is what one restore step answers.
type RestoreProgress struct {
	Step RestoreStep
	Done bool
	// Size is the box's size read back (StepReadSize).
	Size *BoxSize
	// Note is what the step observed, in words, for the operation's record.
	Note string
	// Ended says the step ended the guest's running processes: a stop of a
	// guest that ran.
	Ended bool
	// Resumed says the step brought the guest back running from the
	// snapshot's memory, its processes as they were then: they were not
	// started again, and the guest needs no start.
	Resumed bool
}

// BoxIdentity is a box as a fork or an adoption makes it.
type BoxIdentity struct {
	ID   string
	Name string
	Kind string
	// Install labels the new guest as this install's.
	Install string
	// Secrets is what a fork leaves behind (the zero value: the default
	// list).
	Secrets Secrets
}

// GuestIdentity is what keeps a box the same machine across a swap: its MAC
// addresses and, on QEMU, its SMBIOS.
type GuestIdentity struct {
	MACs   []string
	SMBIOS string
}

// BoxSpec asks a backend for a new box's guest.
type BoxSpec struct {
	Box BoxIdentity
	// Template names what the guest is made from: a template folder on the
	// local backend, a template VMID on Proxmox; empty for an empty box.
	Template string
	// Adopt names an existing guest to adopt instead of making one (a VMID).
	Adopt string
	// Command is a process to run in the box (local backend), or empty.
	Command string
	Host    string
	// User is the unprivileged user the box's process runs as, from its box
	// template; empty means the backend's own unprivileged user. A backend
	// never runs a box's process as root.
	User string
	// Env is the whole environment of the box's process, as its box template
	// declares it: nothing of boxsnap's own environment is passed on.
	Env map[string]string
	// Limits bound the box's process, from its box template.
	Limits BoxLimits
	// NoNetwork keeps the box's process off every network, from its box
	// template: its own network namespace holds only its own loopback.
	// Without it (the default) the process reaches outside networks through
	// a user-mode stack; the host's loopback is never in its reach either
	// way (local backend: README, "Security model").
	NoNetwork bool
	// Publish lists TCP ports on the box's own loopback that the host
	// reaches at the same ports on its loopback (the box's screen, served
	// by its process): inbound only, where the box has a network.
	Publish []int
	// Ran says the box ran on the host it is carried from (a move's or a
	// takeover's make, before the restore that carries it over): the new
	// guest starts no process, but reads as running until it is first
	// started or stopped, so the restore, as for any running box, starts
	// it once its snapshot is in place.
	Ran bool
}

// BoxLimits bound a box's process (its box template's limits). Zero means
// the backend's default bound, never none.
type BoxLimits struct {
	// MemoryBytes bounds the address space of each of the box's processes.
	MemoryBytes int64 `json:"memoryBytes,omitempty"`
	// Processes bounds how many processes the box's user may run.
	Processes int `json:"processes,omitempty"`
	// OpenFiles bounds the files each of the box's processes may hold open.
	OpenFiles int `json:"openFiles,omitempty"`
	// DiskBytes bounds what the box's files hold on disk while it runs.
	DiskBytes int64 `json:"diskBytes,omitempty"`
}

// GuestStatus is what Status reads of a guest.
type GuestStatus struct {
	Exists  bool
	Running bool
	Size    *BoxSize
	// DiskStop is set when the box's files reached its disk bound: the
	// backend stopped it (nil again after a start), or its own file system
	// refuses writes past the bound (Full; nil again once room is made).
	// Its words are the core's (snapshots.DiskStopWords).
	DiskStop *DiskStop
}

// DiskStop is a box that reached its disk bound: the bound, and what its
// files held on disk then. A box its backend measures is stopped there; one
// whose bound its own file system enforces (Full) runs on.
type DiskStop struct {
	BoundBytes int64 `json:"boundBytes"`
	UsedBytes  int64 `json:"usedBytes"`
	// Full is set when the box was not stopped: its own file system refuses
	// each write past the bound (no space left on device), so nothing needs
	// stopping, and the words clear once room is made.
	Full bool `json:"full,omitempty"`
	// Files is set, with Full, when the box's own file system holds as many
	// files as it can (below its bound or at it): that many.
	Files int64 `json:"files,omitempty"`
	// HostFull is set, with Full, when the box's disk cannot grow toward
	// its bound because the host's disk is full.
	HostFull bool `json:"hostFull,omitempty"`
}

// HeldCopyStep is one step of making a held copy.
type HeldCopyStep string

// The steps of a held copy.
const (
	HeldCopyClone    HeldCopyStep = "clone"
	HeldCopyDisarm   HeldCopyStep = "disarm"
	HeldCopyTemplate HeldCopyStep = "template"
	// HeldCopyCloned is the clone step called again once the core saw the
	// clone's own task end OK (it snoozed on it): the copy that clone made,
	// found by its label, is gone on with though it is not yet a template
	// (and AdoptCopy's guest, though it is not yet re-armed).
	HeldCopyCloned HeldCopyStep = "cloned"
)

// HeldCopyProgress is what one held-copy step answers.
type HeldCopyProgress struct {
	Step HeldCopyStep
	Done bool
	Copy *SnapshotRef
	// Template is set when the clone step found this copy made already, a
	// template: the disarm and template steps are done.
	Template bool
	// Remade is set when the clone step found a copy of this snapshot that
	// was not yet a template, deleted it and made it again (never trusted).
	Remade bool
	// ResetVersion is the identity reset's version the copy carries.
	ResetVersion int
}

// HeldSnapshot is one labelled snapshot, earlier guest or held copy that a
// backend holds, as HeldSnapshots lists it.
type HeldSnapshot struct {
	Ref     SnapshotRef
	Label   Label
	Host    string
	Storage string
	TakenAt time.Time
	Holds   Holds
	Size    *Size
	// Incomplete is set when only part of it exists (Proxmox's snapstate, a
	// damaged manifest), with the backend's words in Error.
	Incomplete bool
	Error      string
	// Unshipped is set, with Incomplete, on a snapshot whole on its host
	// whose take was stopped before it was wholly in the content store:
	// its take, asked again with its label, ships the rest.
	Unshipped bool
	// Parent is the backend reference of the snapshot it was taken after.
	Parent string
}

// TaskRef is a provider task's reference, such as a Proxmox UPID.
type TaskRef struct {
	Host string `json:"host"`
	ID   string `json:"id"`
	// Prior marks a task the step waits for before it starts its own (one
	// still holding the guest's lock, left by a restart or by someone
	// else): its end says nothing of the step, which runs again.
	Prior bool `json:"prior,omitempty"`
}

// TaskOutcome is what ProviderTask reads of a task.
type TaskOutcome struct {
	Running    bool
	OK         bool
	ExitStatus string // the backend's words, "OK" or the error
}

// Task types of a backend that keeps no task history of its own (QEMU's
// libvirt), named for what a person at the host would have run.
const (
	TaskVirshRevert   = "virsh revert"
	TaskVirshSnapshot = "virsh snapshot"
	TaskVirshDelete   = "virsh delete"
)

// Task is one entry of a backend's task list.
type Task struct {
	Ref    TaskRef
	Type   string // "vzrollback", "qmrollback", "vzsnapshot", ..., "virsh revert"
	Guest  string // the guest's reference (a VMID)
	User   string
	Start  time.Time
	End    *time.Time
	Status string // "OK", an error, or "" while it runs
	// Target names the snapshot a revert went to, or the snapshot taken,
	// where the backend knows it.
	Target string
	// FirstSeen says Start is when boxsnap first saw the task, not when it
	// started: a backend that keeps no task history (QEMU's libvirt).
	FirstSeen bool
}
