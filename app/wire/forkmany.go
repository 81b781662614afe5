package wire

// ForkManyAnswer is a fork into several boxes in one call (box_fork or
// POST .../fork with count): the one snapshot they were made from, what
// the take said when one was taken first, and each fork with its own
// operation and end, in the order of their names. A fork that failed is
// listed with why; the others stand.
type ForkManyAnswer struct {
	Message string    `json:"message"`
	Forked  string    `json:"forked"`
	Took    string    `json:"took,omitempty"`
	Forks   []ForkOne `json:"forks"`
}

// ForkOne is one fork of a ForkManyAnswer: its new box's name, its ID once
// made, its operation, that operation's state and what it said.
type ForkOne struct {
	Name      string `json:"name"`
	Box       string `json:"box,omitempty"`
	Operation string `json:"operation"`
	State     string `json:"state"`
	Message   string `json:"message"`
}
