package boot

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/contentledger"
	"github.com/boxsnap/boxsnap/app/doctor"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/ship"
)

// contentStoreConfig is the bucket the settings name, or ok false when
// BOXSNAP_CONTENT_STORE is empty.
func contentStoreConfig(cfg config.Config) (objstore.Config, bool, error) {
	if cfg.ContentStore == "" {
		return objstore.Config{}, false, nil
	}
	bucket, prefix, err := objstore.ParseURL(cfg.ContentStore)
	if err != nil {
		return objstore.Config{}, false, err
	}
	return objstore.Config{Bucket: bucket, Prefix: prefix, Endpoint: cfg.ContentStoreEndpoint, Region: cfg.ContentStoreRegion,
		AccessKey: cfg.ContentStoreAccessKey, SecretKey: cfg.ContentStoreSecretKey, CAFile: cfg.ContentStoreCAFile}, true, nil
}

// contentStore is the local backend's content store and the sweep that
// frees its objects and repacks its packs mostly freed, recorded in the
// database on pool; nil, nil when none is set.
func contentStore(cfg config.Config, pool *pgxpool.Pool) (*ship.Remote, func(context.Context) (int, error), error) {
	sc, ok, err := contentStoreConfig(cfg)
	if err != nil || !ok {
		return nil, nil, err
	}
	bucket, err := objstore.Open(sc)
	if err != nil {
		return nil, nil, fmt.Errorf("the content store: %w", err)
	}
	ledger := contentledger.New(pool)
	repacker := &ship.Repacker{Objects: bucket, Keys: sc}
	sweep := func(ctx context.Context) (int, error) { return ledger.Sweep(ctx, repacker) }
	return &ship.Remote{Objects: bucket, Keys: sc, Ledger: ledger}, sweep, nil
}

// contentStoreCheck is the doctor's check of the content store: that the
// bucket is there and an object can be written, read back and deleted
// under its prefix, with the fix.
func contentStoreCheck(cfg config.Config) doctor.Check {
	return func(ctx context.Context) []doctor.Result {
		const name = "content store"
		sc, ok, err := contentStoreConfig(cfg)
		if !ok && err == nil {
			return []doctor.Result{{Name: name, OK: true, Detail: "none: the local backend's snapshots are on this host alone (BOXSNAP_CONTENT_STORE is empty)"}}
		}
		fix := "set BOXSNAP_CONTENT_STORE=s3://bucket/prefix, BOXSNAP_CONTENT_STORE_ENDPOINT and the keys (BOXSNAP_CONTENT_STORE_ACCESS_KEY, BOXSNAP_CONTENT_STORE_SECRET_KEY or their _FILEs)"
		if err != nil {
			return []doctor.Result{{Name: name, Detail: err.Error(), Fix: fix}}
		}
		bucket, err := objstore.Open(sc)
		if err == nil {
			err = bucket.Check(ctx)
		}
		if err != nil {
			return []doctor.Result{{Name: name, Detail: err.Error(), Fix: fix}}
		}
		return []doctor.Result{{Name: name, OK: true, Detail: fmt.Sprintf("%s: an object was written, read back whole and deleted", sc)}, backlogResult(ctx, cfg), cacheResult(cfg)}
	}
}

// backlogResult is the doctor's count of this host's snapshots not in the
// content store yet, which its host's work ships.
func backlogResult(ctx context.Context, cfg config.Config) doctor.Result {
	const name = "content store backlog"
	n, err := local.CountUnshipped(ctx, cfg.LocalRoot)
	if err != nil {
		return doctor.Result{Name: name, Detail: "the snapshots in " + cfg.LocalRoot + " could not be counted: " + err.Error(),
			Fix: "check that boxsnap can read " + cfg.LocalRoot}
	}
	return doctor.Result{Name: name, OK: true, Detail: hosts.UnshippedWords(n, cfg.Intervals.Hosts)}
}

// cacheResult is the doctor's word on this host's content cache: its
// bound and how full it is (hosts.CacheWords).
func cacheResult(cfg config.Config) doctor.Result {
	const name = "content cache"
	u, err := local.CacheUse(cfg.LocalRoot, cfg.ContentCacheBytes, cfg.ContentCachePercent)
	if err != nil {
		return doctor.Result{Name: name, Detail: "the content cache in " + cfg.LocalRoot + " could not be measured: " + err.Error(),
			Fix: "check that boxsnap can read " + cfg.LocalRoot}
	}
	return doctor.Result{Name: name, OK: true, Detail: hosts.CacheWords(u, time.Now())}
}
