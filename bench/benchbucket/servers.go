package benchbucket

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/contentledger"
	"github.com/boxsnap/boxsnap/app/pgcluster"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
	"github.com/boxsnap/boxsnap/providers/local/ship"
)

// Bucket is the bucket boxsnap's content store ships to.
const Bucket = "boxsnap"

// Servers are one run's versitygw and PostgreSQL, under one work folder.
type Servers struct {
	// Work is the run's folder: s3/ is the bucket's, pg/ the database's,
	// and each backend's data folder is named for its host.
	Work string
	// S3 is the versitygw on loopback.
	S3 *s3test.Server
	// Cluster is the private PostgreSQL.
	Cluster *pgcluster.Cluster
	// Pool reaches the database "bench", migrated to boxsnap's schema.
	Pool *pgxpool.Pool
	// Ledger records which snapshots name which objects.
	Ledger *contentledger.Ledger
	// Keys reach Bucket on S3.
	Keys objstore.Config
	// Objects is Bucket, opened once for the benchmark's own sweeps.
	Objects *objstore.Bucket
	// DiskImages gives each backend's new boxes a disk image of their own
	// (local.Config.DiskImages, the default as root), so a restore or a
	// fork writes into a file system other than the data folder's.
	DiskImages bool
}

// Start empties work, then starts versitygw (with Bucket and the buckets
// others made) and PostgreSQL under it. On an error what started is
// stopped.
func Start(ctx context.Context, work string, others ...string) (*Servers, error) {
	s := &Servers{Work: work}
	if err := s.start(ctx, others); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Servers) start(ctx context.Context, others []string) error {
	_ = local.UnmountAll(s.Work)
	if err := os.RemoveAll(s.Work); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(s.Work, "s3"), 0o755); err != nil {
		return err
	}
	bin, err := s3test.Binary()
	if err != nil {
		return err
	}
	if s.S3, err = s3test.StartServer(bin, filepath.Join(s.Work, "s3")); err != nil {
		return err
	}
	for _, b := range append([]string{Bucket}, others...) {
		if err := s.S3.MakeBucket(ctx, b); err != nil {
			return fmt.Errorf("make bucket %s: %w", b, err)
		}
	}
	if s.Cluster, err = pgcluster.Start(ctx, pgcluster.Options{DataDir: filepath.Join(s.Work, "pg"), ForTests: true}); err != nil {
		return err
	}
	if err := s.Cluster.EnsureDatabase(ctx, "bench"); err != nil {
		return err
	}
	if s.Pool, err = pgxpool.New(ctx, s.Cluster.DSN("bench")); err != nil {
		return err
	}
	if err := store.Migrate(ctx, s.Pool, slog.New(slog.DiscardHandler)); err != nil {
		return err
	}
	s.Ledger = contentledger.New(s.Pool)
	s.Keys = s.S3.Config(Bucket, "")
	s.Objects, err = objstore.Open(s.Keys)
	return err
}

// Backend is a local backend as host name, its data folder under Work,
// shipping to Bucket through a client of its own, as a host of its own
// would. It syncs nothing (Config.NoSync), as the other benchmarks, and
// gives boxes disk images of their own only with DiskImages.
func (s *Servers) Backend(name string, logger *slog.Logger) (*local.Backend, error) {
	bucket, err := objstore.Open(s.Keys)
	if err != nil {
		return nil, err
	}
	return local.New(local.Config{Root: filepath.Join(s.Work, name), Install: "bench", NoSync: true, DiskImages: s.DiskImages,
		ContentStore: &ship.Remote{Objects: bucket, Keys: s.Keys, Ledger: s.Ledger},
		Logger:       logger})
}

// Stop stops what Start started and removes Work.
func (s *Servers) Stop() {
	if s.Pool != nil {
		s.Pool.Close()
	}
	if s.Cluster != nil {
		_ = s.Cluster.Stop(context.Background())
	}
	if s.S3 != nil {
		s.S3.Stop()
	}
	_ = local.UnmountAll(s.Work)
	_ = os.RemoveAll(s.Work)
}
