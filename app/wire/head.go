package wire

// HeadBody is PUT /boxes/{box}/head's body: the snapshot, by name or ID,
// the box's next snapshot is taken from.
type HeadBody struct {
	Snapshot string `json:"snapshot"`
}
