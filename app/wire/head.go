package wire

// HeadBody is PUT /boxes/{box}/head's body: the snapshot, by name or ID,
// the box's next snapshot is taken from.
type HeadBody struct {
	Snapshot string `json:"snapshot"`
}

// HeadAnswer is what PUT /boxes/{box}/head and the agent's box_head
// answer: the box's head now, and the words that say so.
type HeadAnswer struct {
	Message  string `json:"message"`
	Box      string `json:"box"`
	Snapshot string `json:"snapshot"`
	Name     string `json:"name"`
}
