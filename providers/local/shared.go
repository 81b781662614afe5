package local

import "github.com/boxsnap/boxsnap/providers"

var _ providers.SharedContent = (*Backend)(nil)

// Sharing answers for the local backend whether other hosts reach its
// snapshots' content (providers.SharedContent). Today every snapshot's
// content is in this host's folder only, so it answers false; Bucket is the
// one place that turns true once the content is kept in a bucket every host
// reaches (a content store), and a move or a takeover of a local box
// between hosts is then allowed.
type Sharing struct {
	// Bucket is whether the content is kept in a bucket every host reaches.
	Bucket bool
}

// ContentShared reports whether other hosts reach the snapshots' content.
func (s Sharing) ContentShared() bool { return s.Bucket }

// A local box's folder is on this host's disk, so its box is this host's
// (Backend embeds providers.ThisHostOnly), whether or not its snapshots'
// content is in a bucket.
var _ providers.OneHost = (*Backend)(nil)
