package wire

import (
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/providers"
)

// ErrorBody is every error answer's shape: the code, the words a person or an
// agent reads, and whether the refusal holds only for now.
type ErrorBody struct {
	Error APIError `json:"error"`
}

// APIError is an error answer's content.
type APIError struct {
	Code     snapshots.Code `json:"code"`
	Message  string         `json:"message"`
	TryAgain bool           `json:"try_again"`
	// Operation names the operation a failed or unconfirmed answer is about.
	Operation string `json:"operation,omitempty"`
}

// OperationAnswer is the answer for an operation: the operation, and once it
// is done, what it did in words.
type OperationAnswer struct {
	Operation *snapshots.Operation `json:"operation"`
	Message   string               `json:"message,omitempty"`
}

// PollAnswer is GET /operations/{operation}'s answer and box_operation's:
// the state in words, and the operation once there is one. State is the
// operation's (running, done, failed, unknown), or a request's: "needs
// input" while it waits for the person's word, declined or expired.
type PollAnswer struct {
	Message   string               `json:"message"`
	State     string               `json:"state"`
	Request   string               `json:"request,omitempty"`
	Operation *snapshots.Operation `json:"operation,omitempty"`
}

// WordsAnswer is an answer that is words alone: DELETE /boxes/{box}/history
// when the box has no automatic snapshot to delete.
type WordsAnswer struct {
	Words string `json:"words"`
}

// ListedFull is one snapshot as the REST API lists it: its record, with who
// took it, when and its size in words. Rename, note, save and unsave answer
// one too.
type ListedFull struct {
	*snapshots.Snapshot
	By   string `json:"by"`
	When string `json:"when"`
	Size string `json:"size"`
	Undo bool   `json:"undo,omitempty"`
}

// BoxSnapshots is one box with the snapshots the caller may see.
type BoxSnapshots struct {
	Box     *snapshots.Box `json:"box"`
	OfLimit string         `json:"ofLimit"`
	// Count and Counted are the count every page shows for the box, by
	// the core's one rule (snapshots.CountOf).
	Count     string           `json:"count"`
	Counted   snapshots.Counts `json:"counted"`
	Message   string           `json:"message"`
	Snapshots []ListedFull     `json:"snapshots"`
}

// BoxAnswer is one box as GET /boxes/{box} answers it: the box, and why
// its backend stopped it by itself, when it did (it reached its disk
// bound).
type BoxAnswer struct {
	*snapshots.Box
	Stopped string `json:"stopped,omitempty"`
}

// ListAnswer is GET /snapshots's answer: a page of boxes.
type ListAnswer struct {
	Boxes []BoxSnapshots `json:"boxes"`
	// Next is the path, under /api/v1, of the next page of boxes, or ""
	// at the last.
	Next string `json:"next,omitempty"`
}

// ForkCheckAnswer is GET .../fork's answer: whether the snapshot can be
// forked now, from its plan, and why not (the CLI's fork --check).
type ForkCheckAnswer struct {
	OK       bool   `json:"ok"`
	Why      string `json:"why,omitempty"`
	Message  string `json:"message"`
	Snapshot string `json:"snapshot"`
	AboutMs  int64  `json:"aboutMs"`
	Bytes    *int64 `json:"bytes,omitempty"`
}

// ShareAnswer is POST .../shares's answer: the code, in this answer and
// nowhere else, ever.
type ShareAnswer struct {
	Code    string          `json:"code"`
	Share   *contents.Share `json:"share"`
	Message string          `json:"message"`
}

// SharesAnswer is GET /shares's answer: the share codes' records, never a
// code.
type SharesAnswer struct {
	Shares []*contents.Share `json:"shares"`
}

// ForgetAnswer is what "Forget its snapshots" would remove, or removed: the
// records of a backend no longer in settings.
type ForgetAnswer struct {
	Backend   string   `json:"backend"`
	Snapshots []string `json:"snapshots"`
	Lines     []string `json:"lines"`
	Bytes     int64    `json:"bytes"`
	Words     string   `json:"words"`
	// Stayed names the records an operation still used (POST only).
	Stayed []string `json:"stayed,omitempty"`
}

// ApprovalsAnswer lists the requests waiting for the person's word.
type ApprovalsAnswer struct {
	Approvals []*approvals.Approval `json:"approvals"`
}

// FilesAnswer is one folder of a snapshot: folders first, links as links.
type FilesAnswer struct {
	Box      string      `json:"box"`
	Snapshot string      `json:"snapshot"`
	Name     string      `json:"name"`
	Path     string      `json:"path"`
	Entries  []FileEntry `json:"entries"`
}

// FileAnswer is one file of a snapshot shown inline.
type FileAnswer struct {
	Box      string    `json:"box"`
	Snapshot string    `json:"snapshot"`
	Entry    FileEntry `json:"entry"`
	Text     string    `json:"text,omitempty"`
	Binary   bool      `json:"binary,omitempty"`
	Cut      string    `json:"cut,omitempty"`
}

// DiffAnswer is a page of a comparison, or one file's unified diff.
type DiffAnswer struct {
	Message  string       `json:"message"`
	Box      string       `json:"box"`
	Snapshot string       `json:"snapshot"`
	Name     string       `json:"name"`
	Against  string       `json:"against"` // "now", or the other snapshot's ID
	Added    int          `json:"added"`
	Removed  int          `json:"removed"`
	Changed  int          `json:"changed"`
	Total    int          `json:"total"`
	Offset   int          `json:"offset"`
	Next     *int         `json:"next,omitempty"`
	Changes  []FileChange `json:"changes"`
	// Path and Diff answer a file's comparison: its unified diff, "" when
	// it did not change.
	Path string  `json:"path,omitempty"`
	Diff *string `json:"diff,omitempty"`
}

// ImportAnswer is an import's answer: what it did, and its operation. A
// redeem answers its ImportResult alone.
type ImportAnswer struct {
	*contents.ImportResult
	Operation string `json:"operation"`
}

// TrashAnswer lists the boxes in the trash the caller may see: an agent
// only its own thread's.
type TrashAnswer struct {
	Trash []snapshots.TrashEntry `json:"trash"`
}

// TemplatesAnswer is GET /templates's answer to the person: every box
// template whole.
type TemplatesAnswer struct {
	Templates []snapshots.BoxTemplate `json:"templates"`
}

// TemplateView is a box template as an agent reads it: what it chooses by,
// never the command, the user, the environment or the source.
type TemplateView struct {
	Name      string `json:"name"`
	Backend   string `json:"backend"`
	Kind      string `json:"kind"`
	HasScreen bool   `json:"hasScreen,omitempty"`
}

// TemplateViewsAnswer is GET /templates's answer to an agent.
type TemplateViewsAnswer struct {
	Templates []TemplateView `json:"templates"`
}

// FileEntry is one entry of a snapshot's folder (FilesAnswer, FileAnswer),
// the providers' type, named here so a client reads it without a provider.
type FileEntry = providers.FileEntry

// FileChange is one path of a comparison (DiffAnswer), the providers'
// type, named here as FileEntry is.
type FileChange = providers.FileChange
