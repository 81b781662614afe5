package pgcluster_test

import (
	"context"
	"log"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/pgcluster"
)

// Start a cluster in boxsnap's data folder, make the app's database, open a
// pool on it, and stop the cluster on the way out.
func ExampleStart() {
	ctx := context.Background()
	c, err := pgcluster.Start(ctx, pgcluster.Options{DataDir: "/var/lib/boxsnap/postgres", Logger: slog.Default()})
	if err != nil {
		log.Fatal(err) // one line: what is wrong and how to fix it
	}
	defer c.Stop(context.WithoutCancel(ctx))
	if err := c.EnsureDatabase(ctx, "boxsnap"); err != nil {
		log.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, c.DSN("boxsnap"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
}
