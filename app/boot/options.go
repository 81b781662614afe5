package boot

import (
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// Options are what tests change about a process.
type Options struct {
	// ExtraWorkers registers more River workers (tests).
	ExtraWorkers func(*river.Workers)
	// Ready is called once the process serves, with its URL (tests).
	Ready func(url string, client *river.Client[pgx.Tx])
}
