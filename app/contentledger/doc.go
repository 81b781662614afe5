// Package contentledger is the record in PostgreSQL of the local
// backend's content store (an S3 bucket): which objects it holds, which
// snapshot names which object, and the claims of takes shipping objects
// now. Its Ledger answers the local backend's ship.Ledger, and its Sweep,
// run periodically by any process, deletes from the bucket the objects
// nothing names, and only those: freeing is decided here, never by
// listing the bucket.
//
// Why a claim rather than a grace period alone: a take claims every key
// it will ship (a row lock the sweep's FOR UPDATE shares) before it asks
// whether the object is stored, and the sweep takes only unclaimed rows,
// deleting each object in the bucket inside the transaction that forgets
// its row, after an earlier committed step recorded it not stored. A
// take's claim therefore waits for a sweep that is deleting the object,
// and then finds it not stored and puts it again; a sweep killed after its
// bucket delete rolls back to a row recorded not stored (a take puts it
// again), and the next sweep deletes again. A
// claim lasts Grace (a killed take's objects stay that long), and naming
// an object whose row a sweep forgot fails (a foreign key), so no snapshot
// names an object the bucket lacks.
//
// Packs (packs.go): most objects lie in packs, one bucket object holding
// many. Which pack may go is decided from the objects' rows alone, never
// from names: the sweep forgets a packed object as it forgets any (with no
// request to the bucket), and deletes a pack only when no object row that
// is stored or claimed lies in it and the pack's own claim (held from
// before its put until it is recorded) ran out. A take never adds to a
// pack, and an object recorded not stored is never again recorded stored
// in the same pack, so a pack found free stays free. A pack mostly free is
// kept whole, not repacked as restic's prune does: its freed objects'
// bytes are waste (PackWaste counts them), bounded by a pack's size per
// live object, and a repack would rewrite live bytes across hosts for
// that.
//
// It imports app/store/db and pgx; it must never import app/web, app/api,
// app/cli, jobs or providers/ (the bucket is reached through Deleter).
package contentledger
