package wire

import (
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// The agent tools' answers (POST /api/v1/tools/<tool>, and the same over
// MCP) and the few bodies and answers of the routes that app/api alone
// reads and writes.

// BoxesAnswer is GET /boxes' and box_list's answer: the boxes the caller
// may see.
type BoxesAnswer struct {
	Boxes []*snapshots.Box `json:"boxes"`
}

// LogAnswer is GET /boxes/{box}/log's answer: a box's log.
type LogAnswer struct {
	Box    string               `json:"box"`
	Events []snapshots.LogEvent `json:"events"`
}

// CodeBody is the body of POST /shares/redeem and POST /shared: a share
// code.
type CodeBody struct {
	Code string `json:"code"`
}

// ThreadBody is the body of POST /threads: the new thread's title.
type ThreadBody struct {
	Title string `json:"title"`
}

// ThreadAnswer holds the thread's token, shown this once: boxsnap keeps
// only its hash.
type ThreadAnswer struct {
	Thread  *snapshots.Thread `json:"thread"`
	Token   string            `json:"token"`
	Message string            `json:"message"`
}

// ThreadsAnswer is GET /threads' answer: the threads.
type ThreadsAnswer struct {
	Threads []*snapshots.Thread `json:"threads"`
}

// AskedAnswer is box_restore's answer when it asked the person instead
// (the form it takes): 202, the words, the request's ID and its state,
// "needs input", the state box_operation answers for that request until
// the person decides. The answer is kept under the call's retry key.
type AskedAnswer struct {
	Message string `json:"message"`
	Request string `json:"request"`
	State   string `json:"state"`
}

// ResetAnswer is box_reset's answer.
type ResetAnswer struct {
	Message   string   `json:"message"`
	Operation string   `json:"operation"`
	Box       string   `json:"box"`
	Undo      string   `json:"undo"`
	UndoName  string   `json:"undoName"`
	Kept      []string `json:"kept,omitempty"`
	Skipped   []string `json:"skipped,omitempty"`
}

// RestoreAnswer is box_restore's answer: what it replaced, the undo's name,
// whether processes ended, size changes, and the box's state.
type RestoreAnswer struct {
	Message        string             `json:"message"`
	Operation      string             `json:"operation"`
	Box            string             `json:"box"`
	Snapshot       string             `json:"snapshot"`
	Name           string             `json:"name"`
	Undo           string             `json:"undo,omitempty"`
	UndoName       string             `json:"undoName,omitempty"`
	ProcessesEnded bool               `json:"processesEnded"`
	Size           *providers.BoxSize `json:"size,omitempty"`
	BoxState       string             `json:"boxState"`
	ReplacedUndos  []string           `json:"replacedUndos,omitempty"`
}

// SaveAnswer is what box_snapshot_save and box_snapshot_unsave answer.
type SaveAnswer struct {
	Message   string `json:"message"`
	Snapshot  string `json:"snapshot"`
	Name      string `json:"name"`
	Automatic bool   `json:"automatic"`
}

// TakeAnswer is box_snapshot's answer: its name and ID, what it holds and
// leaves out, its size where known, how long it took, its price if any, and
// "3 of 5 for this box".
type TakeAnswer struct {
	Message   string           `json:"message"`
	Operation string           `json:"operation"`
	Snapshot  string           `json:"snapshot"`
	Name      string           `json:"name"`
	Box       string           `json:"box"`
	Holds     string           `json:"holds"`
	Excludes  string           `json:"excludes,omitempty"`
	SizeBytes *int64           `json:"sizeBytes,omitempty"`
	Size      string           `json:"size"`
	TookMs    int64            `json:"tookMs"`
	Price     *providers.Price `json:"price,omitempty"`
	Count     int              `json:"count"`
	Limit     int              `json:"limit"`
	OfLimit   string           `json:"ofLimit"`
	Replaced  string           `json:"replaced,omitempty"`
}

// DeleteAnswer is box_snapshot_delete's answer: what it freed, where known.
type DeleteAnswer struct {
	Message    string `json:"message"`
	Operation  string `json:"operation"`
	Snapshot   string `json:"snapshot"`
	Name       string `json:"name"`
	FreedBytes *int64 `json:"freedBytes,omitempty"`
	Freed      string `json:"freed"`
}

// BoxListing is one box in box_snapshots' answer: what its snapshots hold,
// or that it has none.
type BoxListing struct {
	Box     string `json:"box"`
	ID      string `json:"id"`
	Message string `json:"message"`
	OfLimit string `json:"ofLimit"`
	// Stopped says why its backend stopped the box by itself (it reached
	// its disk bound), when it did.
	Stopped   string        `json:"stopped,omitempty"`
	Snapshots []ListedShort `json:"snapshots"`
}

// ListedShort is one snapshot as a tool lists it: name, ID, when, by,
// holds, size, price, kept, which guest, and its picture when asked.
type ListedShort struct {
	Name      string           `json:"name"`
	ID        string           `json:"id"`
	TakenAt   time.Time        `json:"takenAt"`
	When      string           `json:"when"`
	By        string           `json:"by"`
	Holds     string           `json:"holds"`
	SizeBytes *int64           `json:"sizeBytes,omitempty"`
	Size      string           `json:"size"`
	Price     *providers.Price `json:"price,omitempty"`
	Kept      bool             `json:"kept"`
	KeptUntil *time.Time       `json:"keptUntil,omitempty"`
	Guest     string           `json:"guest"`
	State     string           `json:"state"`
	Note      string           `json:"note,omitempty"`
	Undo      bool             `json:"undo,omitempty"`
	// Automatic: boxsnap took it because the box changed; it is thinned and
	// not counted in the limit until box_snapshot_save saves it.
	Automatic bool         `json:"automatic"`
	Picture   *PictureData `json:"picture,omitempty"`
}

// PictureData is a snapshot's picture of the screen: a JPEG, base64.
type PictureData struct {
	JPEG   string `json:"jpeg"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

// SnapshotsAnswer is box_snapshots' answer: each box the caller may see
// with its snapshots.
type SnapshotsAnswer struct {
	Boxes []BoxListing `json:"boxes"`
}

// ForkAnswer is box_fork's answer: the new box, as box_acquire answers it,
// and “forked from amber-fox at 10:42”; with the take's words when it took
// a snapshot first.
type ForkAnswer struct {
	*snapshots.Box
	Message   string `json:"message"`
	Operation string `json:"operation"`
	From      string `json:"from"`
	// Forked is the ID of the snapshot the fork was made from.
	Forked string `json:"forked"`
	// Took is what the take said, when box_fork took a snapshot first.
	Took string `json:"took,omitempty"`
}
