package boot

import (
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/contentledger"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
)

// TestDoctorChecksThePacksByTheirIndexes: boxsnap doctor checks each pack
// the ledger records against the bucket, and a pack the ledger places
// objects in that the bucket lacks fails the check, named, with its fix.
func TestDoctorChecksThePacksByTheirIndexes(t *testing.T) {
	ctx := t.Context()
	srv := s3test.Start(t)
	sc := srv.Bucket(t)
	cfg := config.Config{ContentStore: "s3://" + sc.Bucket + "/boxsnap", ContentStoreEndpoint: srv.Endpoint, ContentStoreRegion: "us-east-1",
		ContentStoreAccessKey: srv.AccessKey, ContentStoreSecretKey: srv.SecretKey}
	database := &Database{Pool: dbtest.New(t)}
	got := packIndexCheck(cfg, &database)(ctx)
	if len(got) != 1 || !got[0].OK || !strings.Contains(got[0].Detail, "0 packs holding 0 objects") {
		t.Fatalf("the doctor with no packs recorded: %+v", got)
	}

	l := contentledger.New(database.Pool)
	key := "boxsnap/content/ab/" + strings.Repeat("c", 62)
	pack := "boxsnap/packs/0f/" + strings.Repeat("e", 30)
	if _, err := l.Claim(ctx, []string{key}); err != nil {
		t.Fatal(err)
	}
	if err := l.ClaimPack(ctx, pack, 100); err != nil {
		t.Fatal(err)
	}
	if err := l.StoredPack(ctx, pack, []string{key}, []int64{0}, []int64{10}); err != nil {
		t.Fatal(err)
	}
	got = packIndexCheck(cfg, &database)(ctx)
	if len(got) != 1 || got[0].OK || !strings.Contains(got[0].Detail, "1 of the 1 packs") || !strings.Contains(got[0].Detail, pack+" is not in the bucket, yet the ledger records objects in it (1)") ||
		!strings.Contains(got[0].Fix, "put the packs back from a copy of the bucket") {
		t.Fatalf("the doctor with a pack gone from the bucket: %+v", got)
	}
	if strings.Contains(got[0].Detail+got[0].Fix, srv.SecretKey) {
		t.Fatal("the doctor shows the secret key")
	}

	var nobody *Database
	if got := packIndexCheck(cfg, &nobody)(ctx); len(got) != 0 {
		t.Fatalf("the doctor with no database checked the packs: %+v", got)
	}
}
