package boot

import (
	"context"
	"fmt"
	"strings"

	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/contentledger"
	"github.com/boxsnap/boxsnap/app/doctor"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/ship"
)

// packDiffersShown bounds the differences the doctor prints.
const packDiffersShown = 3

// packIndexCheck is the doctor's check of the ledger's record of the
// content store's packs against the bucket: each pack the ledger records
// is read by its own index (at the pack's end; the bucket is never
// listed), and every object the ledger places in it must lie where that
// index says. It checks nothing without a content store or a database
// (*database is set by the database's check).
func packIndexCheck(cfg config.Config, database **Database) doctor.Check {
	return func(ctx context.Context) []doctor.Result {
		const name = "content store packs"
		sc, ok, err := contentStoreConfig(cfg)
		if !ok || err != nil || *database == nil {
			return nil
		}
		bucket, err := objstore.Open(sc)
		if err != nil {
			return nil // the content store's own check says why
		}
		r := &ship.Repacker{Objects: bucket, Keys: sc}
		var packs, objects, differ int
		var shown []string
		err = contentledger.New((*database).Pool).EachPack(ctx, func(pack string, size int64, keys []string, offs, lens []int64) error {
			d, err := r.CheckPack(ctx, ship.PackRecord{Key: pack, Size: size, Keys: keys, Offs: offs, Lens: lens})
			packs, objects = packs+1, objects+len(keys)
			if len(d) > 0 {
				differ++
			}
			shown = append(shown, d...)
			return err
		})
		if err != nil {
			return []doctor.Result{{Name: name, Detail: "the packs could not be checked against the bucket: " + err.Error(),
				Fix: "fix the content store first (see its check above)"}}
		}
		if differ > 0 {
			return []doctor.Result{{Name: name,
				Detail: fmt.Sprintf("%d of the %d packs the ledger records differ from their own index in the bucket: %s", differ, packs, strings.Join(shown[:min(len(shown), packDiffersShown)], "; ")),
				Fix:    "the snapshots whose objects lie in those packs cannot be restored from the bucket: put the packs back from a copy of the bucket, or delete those snapshots and take their boxes again"}}
		}
		return []doctor.Result{{Name: name, OK: true, Detail: fmt.Sprintf("%d packs holding %d objects: each object lies where the ledger records it, by its pack's own index", packs, objects)}}
	}
}
