package contents

// ImportResult is what an import did.
type ImportResult struct {
	Box     string `json:"box"`
	BoxName string `json:"boxName"`
	// Made is set when the box was made here by this import, from the
	// snapshot named in MadeFrom.
	Made      bool               `json:"made"`
	MadeFrom  string             `json:"madeFrom,omitempty"`
	Snapshots []ImportedSnapshot `json:"snapshots"`
	Words     string             `json:"words"`
}

// ImportedSnapshot is one snapshot of an import.
type ImportedSnapshot struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Parent string `json:"parent,omitempty"`
	// Already is set when it was here already: importing it again changes
	// nothing.
	Already bool `json:"already"`
}
