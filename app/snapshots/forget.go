package snapshots

// EvSnapshotForgotten is the box log's event for a record the person forgot.
const EvSnapshotForgotten = "snapshot-forgotten"

// GoneBackend is a backend no longer in settings whose snapshots boxsnap
// still records: they show as unavailable, with "Forget its snapshots" for
// the person: a backend that cannot be reached loses nothing by itself.
type GoneBackend struct {
	ID        string `json:"backend"`
	Snapshots int    `json:"snapshots"`
	Bytes     int64  `json:"bytes"`
}

// ForgetPlan is what "Forget its snapshots" removes: the records of every
// snapshot of a backend no longer in settings, named with their size and
// price.
type ForgetPlan struct {
	Backend   string       `json:"backend"`
	Snapshots []ForgetItem `json:"snapshots"`
	Bytes     int64        `json:"bytes"`
	// Lines name each snapshot, its box, size and price.
	Lines []string `json:"lines"`
	// Words ask the question, and say the records go and nothing else.
	Words string `json:"words"`
}

// ForgetItem is one snapshot Forget would remove the record of.
type ForgetItem struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	BoxID string `json:"box"`
}
