package contents

import "github.com/boxsnap/boxsnap/providers"

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
