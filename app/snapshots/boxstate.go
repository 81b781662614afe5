package snapshots

// BoxState is where a box is in its life: made, ready for work, being
// released, released.
type BoxState string

// Box states.
const (
	BoxMaking    BoxState = "making"    // its guest is being made or imported
	BoxReady     BoxState = "ready"     // it works; snapshots are taken and restored
	BoxReleasing BoxState = "releasing" // its release runs
	BoxReleased  BoxState = "released"  // its guest is gone; kept snapshots may stay
	BoxTrashed   BoxState = "trashed"   // released into the trash: stopped, restorable until its window ends
)
