package contents

import "github.com/boxsnap/boxsnap/providers"

// exportedHolds is what an export file's manifest says each snapshot holds:
// its archive carries the snapshot's disk alone, never a guest's memory (a
// QEMU snapshot taken with memory exports as its disk), so the manifest
// says what the file truly brings, not what the snapshot held here.
const exportedHolds = string(providers.HoldsDisk)

// importedHolds is what an imported snapshot holds on this install: what
// the backend that published it says, never its manifest's word, since a
// snapshot exported with memory arrives as its disk. A backend that says
// nothing is taken to hold the disk alone, so no restore promises
// processes it cannot bring back.
func importedHolds(d providers.ImportedSnapshot) string {
	if d.Holds == "" {
		return string(providers.HoldsDisk)
	}
	return string(d.Holds)
}
