package contentledger

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// killedSessions is the application name of the sessions of a process a
// test kills: PostgreSQL ends them as it ends a crashed process's.
const killedSessions = "boxsnap repack killed"

// TestRepackSessionKilledAtEveryStep: a process killed while it repacks
// (its sessions ended as a crash ends them, so its transaction goes back
// and its advisory lock goes, with none of its own clean-up run) after the
// new pack's claim, after its put (the pack written, not recorded), in the
// transaction that records the move, and after that commits (recorded, the
// old packs not yet deleted), never leaves an object a ready snapshot
// names unreadable; another process's next sweeps repack what it left
// (the lock is free again), and once the claims and the grace ran out
// nothing is left that nothing names, and every ready snapshot restores
// byte-exact.
func TestRepackSessionKilledAtEveryStep(t *testing.T) {
	for _, step := range []string{"claimed", "put", "moved", "committed"} {
		t.Run(step, func(t *testing.T) {
			f := newPackFixture(t)
			trees := f.churnSnapshots(3, 2)
			ready := readyIDs(trees)
			f.runOutAllClaims()

			cfg := f.ledger.pool.Config().Copy()
			cfg.ConnConfig.RuntimeParams["application_name"] = killedSessions
			pool, err := pgxpool.NewWithConfig(f.ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			kctx, kill := context.WithCancel(f.ctx)
			killed := New(pool)
			reached := make(chan struct{})
			killed.hooks.repacking = func(s string) error {
				if s == step {
					close(reached)
					<-kctx.Done() // the process is dead: it does nothing more
					return kctx.Err()
				}
				return nil
			}
			ended := make(chan struct{})
			go func() {
				defer close(ended)
				_, _ = killed.Sweep(kctx, f.repacker())
			}()
			t.Cleanup(func() {
				kill()
				<-ended
				pool.Close()
			})
			select {
			case <-reached:
			case <-ended:
				t.Fatalf("the sweep ended before its repack reached %s", step)
			}
			if _, err := f.ledger.pool.Exec(f.ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, killedSessions); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(30 * time.Second); ; {
				var n int
				if err := f.ledger.pool.QueryRow(f.ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, killedSessions).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d sessions of the killed process outlived it by 30 s", n)
				}
				time.Sleep(10 * time.Millisecond)
			}
			f.keptWhole("after the repack's process was killed at "+step, ready...)
			f.restoresExact("after the repack's process was killed at "+step, trees)

			for range 2 {
				f.runOutAllClaims()
				if _, err := f.ledger.Sweep(f.ctx, f.repacker()); err != nil {
					t.Fatalf("a sweep after the process killed at %s: %v", step, err)
				}
				f.keptWhole("after a sweep after the process killed at "+step, ready...)
			}
			f.nothingUnnamedLeft("after the sweeps after the process killed at "+step, ready...)
			after, packs := f.packBytes()
			if live := f.liveBytes(ready...); after > 2*live+int64(packs)*64<<10 {
				t.Fatalf("after the process killed at %s, the next sweeps left %d bytes in %d packs for %d live: they did not repack", step, after, packs, live)
			}
			f.restoresExact("after the sweeps after the process killed at "+step, trees)
		})
	}
}

// TestRepackPutOutlivingItsClaim: a repack whose bucket stops answering
// after the new pack's claim, for longer than the claim lasts, so another
// process's sweep forgets the claim meanwhile, then puts its pack after
// all: the move it can no longer record leaves every ready snapshot whole,
// and the pack it put is not left in the bucket with nothing naming it.
func TestRepackPutOutlivingItsClaim(t *testing.T) {
	f := newPackFixture(t)
	trees := f.churnSnapshots(3, 2)
	ready := readyIDs(trees)
	f.runOutAllClaims()

	slow := New(f.ledger.pool)
	reached, resume := make(chan struct{}), make(chan struct{})
	slow.hooks.repacking = func(s string) error {
		if s == "claimed" {
			close(reached)
			<-resume
		}
		return nil
	}
	done := make(chan error, 1)
	go func() {
		_, err := slow.Sweep(f.ctx, f.repacker())
		done <- err
	}()
	select {
	case <-reached:
	case err := <-done:
		t.Fatalf("the sweep ended before its repack claimed a pack: %v", err)
	}
	// The claim runs out while the bucket does not answer, and another
	// process's sweep forgets the pack nothing lies in.
	f.runOutAllClaims()
	if _, err := New(f.ledger.pool).Sweep(f.ctx, f.bucket); err != nil {
		t.Fatal(err)
	}
	close(resume)
	t.Logf("the repack whose claim was forgotten answered %v", <-done)

	f.keptWhole("after a repack outlived its claim", ready...)
	f.restoresExact("after a repack outlived its claim", trees)
	for range 2 {
		f.runOutAllClaims()
		if _, err := f.ledger.Sweep(f.ctx, f.repacker()); err != nil {
			t.Fatalf("a sweep after a repack outlived its claim: %v", err)
		}
	}
	f.nothingUnnamedLeft("after the sweeps after a repack outlived its claim", ready...)
	f.restoresExact("after the sweeps after a repack outlived its claim", trees)
}
