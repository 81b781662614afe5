package snapshots

import (
	"log/slog"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/store"
)

// Records is the kernel's record reads: snapshots, boxes, threads, a box's
// trash row and the pins of the operations running now, with a snapshot's
// change of state. The Kernel embeds it, so a seam that reads records
// reaches them through *Service as before.
type Records struct {
	st *store.Store
}

// Admission is the kernel's admission of an operation: a repeated request
// ID's answer, the box's row locked, an unsettled box refused, the
// operation recorded with its job, and a tool's answer kept under its
// retry key. It reads records through its Records.
type Admission struct {
	*Records
	st  *store.Store
	ops *operations.Engine
}

// BoxLog is the box log's writer: one event a call, and the pages that
// show the box told at its commit.
type BoxLog struct {
	st     *store.Store
	ops    *operations.Engine
	logger *slog.Logger
}
