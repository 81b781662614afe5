package snapshots

import "github.com/boxsnap/boxsnap/providers"

// Comparison is a page of what differs between a snapshot and the box now,
// or another snapshot of the same box.
type Comparison struct {
	Snapshot *Snapshot `json:"-"`
	Box      *Box      `json:"-"`
	// Against is the other snapshot, nil for the box now.
	Against *Snapshot `json:"-"`
	// Added, Removed and Changed count every path that differs (folders
	// added or removed included), seen from the snapshot: added since,
	// removed since, changed since.
	Added   int `json:"added"`
	Removed int `json:"removed"`
	Changed int `json:"changed"`
	Total   int `json:"total"`
	// Offset and Changes are this page.
	Offset  int                    `json:"offset"`
	Changes []providers.FileChange `json:"changes"`
	// Words says the counts in the specification's words: "14 files
	// changed, 2 added, 1 removed since then".
	Words string `json:"words"`
}
