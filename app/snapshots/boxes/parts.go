package boxes

import "github.com/boxsnap/boxsnap/app/store"

// backends answers the kernel's configured backends, for the seams of
// this package that name them.
type backends struct{ k kernel }

// ThreadKeeper is the threads: made, read by their token or ID, listed, and
// their titles. Boxes embeds it.
type ThreadKeeper struct {
	k  kernel
	st *store.Store
}

// TemplateKeeper is the box templates: checked, listed, read, saved and
// removed. Boxes embeds it.
type TemplateKeeper struct {
	backends
	st *store.Store
}

// Forgetting is forgetting a backend gone from the settings: the backends
// gone, the plan of what forgetting one lets go, and the forgetting.
// Boxes embeds it.
type Forgetting struct {
	backends
	st *store.Store
}

// HistorySettings is a box's settings of automatic history, read and
// changed. Boxes embeds it.
type HistorySettings struct {
	k  kernel
	st *store.Store
}
