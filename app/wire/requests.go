package wire

// TakeBody is POST /boxes/{box}/snapshots's body, all of it optional.
type TakeBody struct {
	Name    string `json:"name"`
	Note    string `json:"note"`
	Memory  bool   `json:"memory"`
	Request string `json:"request,omitempty"`
}

// RestoreBody is POST .../restore's body. Replace must be true; NoUndo and
// Force are the person's alone (the CLI's --no-undo and --force).
type RestoreBody struct {
	Replace *bool  `json:"replace"`
	NoUndo  bool   `json:"noUndo"`
	Force   bool   `json:"force"`
	Request string `json:"request,omitempty"`
}

// KeepBody is POST .../keep's body: days from today, or a date to keep it
// until (YYYY-MM-DD, the end of that UTC day); neither means the setting.
type KeepBody struct {
	Days    int    `json:"days,omitempty"`
	Until   string `json:"until,omitempty"`
	Request string `json:"request,omitempty"`
}

// RequestBody is the body of a change that takes nothing but an optional
// request ID: POST .../unkeep and .../renew. The CLI sends it empty ({})
// to the routes that read no body: approve, decline and unsave.
type RequestBody struct {
	Request string `json:"request,omitempty"`
}

// RenameBody is PUT .../name's body.
type RenameBody struct {
	Name string `json:"name"`
}

// NoteBody is PUT .../note's body; an empty note clears it.
type NoteBody struct {
	Note string `json:"note"`
}

// SaveBody is POST .../save's body: a new name, optional.
type SaveBody struct {
	Name string `json:"name"`
}

// HistoryBody is PUT /boxes/{box}/history's body: null follows the
// backend's setting (automatic) or the default size (maxGiB).
type HistoryBody struct {
	Automatic *bool  `json:"automatic"`
	MaxGiB    *int64 `json:"maxGiB"`
}

// DeleteHistoryBody is DELETE /boxes/{box}/history's body: the box's name,
// typed again.
type DeleteHistoryBody struct {
	Confirm string `json:"confirm"`
	Request string `json:"request,omitempty"`
}

// ForkBody is POST .../fork's body, all of it optional: the new box's name,
// whether it is one of the person's machines (the CLI's --as-machine, the
// person's alone), and a request ID.
type ForkBody struct {
	Name      string `json:"name"`
	AsMachine bool   `json:"asMachine"`
	Request   string `json:"request,omitempty"`
	// Count forks into that many boxes from the one snapshot
	// (ForkManyAnswer); left out, one fork, answered as an operation.
	// Sent, it is 1 or more.
	Count *int `json:"count,omitempty"`
}

// ShareBody is POST .../shares's body.
type ShareBody struct {
	// Days is how long the code works, 1 to 30; 0 is the setting.
	Days int `json:"days"`
}

// RedeemBody is POST /shares/redeem's body.
type RedeemBody struct {
	Code string `json:"code"`
	// From is the address of the boxsnap that made the code, when it is
	// another: its name and port; boxsnap calls its share endpoint only.
	From string `json:"from,omitempty"`
}

// ResetBody is POST /boxes/{box}/reset's body.
type ResetBody struct {
	KeepLogins bool   `json:"keepLogins"`
	Template   string `json:"template,omitempty"`
	Force      bool   `json:"force"`
	Request    string `json:"request,omitempty"`
}

// UndoBody is POST /boxes/{box}/undo's body.
type UndoBody struct {
	Force   bool   `json:"force"`
	Request string `json:"request,omitempty"`
}
