// Package tab holds the lists of the Snapshots tab and the Boxes page: a
// page of the tab's boxes with their snapshots, searched, filtered, sorted
// and paged in the database (Tab.Snapshots), the counts of every snapshot
// (Tab.Tally), the Boxes page's tabs' counts (Tab.Totals), each backend's
// kinds of box (Tab.BoxKinds) and one live box of each kind
// (Tab.LiveBoxPerKind), and the snapshots the Select mode picked, by ID,
// with their boxes and pins (Tab.Pick). It reads through the store's
// Reader, so a page that asks within one read (store.ReadOnce) draws its
// rows and counts from one moment. It reaches the kernel (app/snapshots)
// through the small interface kernel, for the pins of the operations
// running now; the kernel never imports it. words.go holds the words only
// the tab says.
//
// It must never import app/web, app/api, app/cli, jobs or a provider's
// subpackage.
package tab
