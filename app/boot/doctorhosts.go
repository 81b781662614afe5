package boot

import (
	"context"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/doctor"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/app/store"
)

// workersResult is the doctor's word on the hosts' queues: whether any
// holds jobs that no live worker of its host runs (a host seen only
// through serve --workers=false, or whose workers stopped).
func workersResult(ctx context.Context, database *Database) doctor.Result {
	const name = "hosts' workers"
	stranded, err := hosts.Stranded(ctx, store.New(database.Pool), time.Now())
	if err != nil {
		return doctor.Result{Name: name, Detail: "the hosts' queues could not be read: " + err.Error(), Fix: "run boxsnap migrate, then check the database"}
	}
	if len(stranded) == 0 {
		return doctor.Result{Name: name, OK: true, Detail: "every host with jobs waiting has a live worker"}
	}
	return doctor.Result{Name: name, Detail: strings.Join(stranded, " "), Fix: "start boxsnap work on each host named"}
}
