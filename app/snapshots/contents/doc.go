// Package contents is the core's look inside snapshots and their moves in
// and out of boxsnap: a snapshot's files browsed, shown, downloaded and
// compared with the box now or another snapshot of the same box (files.go),
// a restore's preview, export files written and staged (move.go), imports
// and their Import operation (importop.go), share codes made, listed,
// revoked and redeemed (share.go), and a redeem of a code from another
// boxsnap (redeemfrom.go).
//
// Contents is a struct with the fields it uses: the store for its own rows
// (share codes, an import's box and snapshots), the clock, the folder
// imports are staged in and the bounds of a redeem. What it needs of the
// kernel (records, the box log, the settings, the backends, admission and
// steps of its operation) it reaches through the kernel interface it
// declares, and the snapshot operations through snapshotOps; both are the
// core's *snapshots.Service, given to New in app/boot. New registers the
// Import operation's kind with the kernel's engine; the restore asks
// Contents for a dry run's preview through restore.RestorePreviewer,
// which app/boot gives it (restore.Restores.UseRestorePreview).
//
// words.go is the one home of the words Contents alone says; the words the
// kernel also says stay in package snapshots. A refusal carries a
// snapshots.Code, never an HTTP status, and the package imports no
// net/http: a redeem from another boxsnap fetches through the FetchShared
// it is given (app/remote's).
//
// The files stand on floors: what the others hang on (the comparisons'
// cache, an import's result, a redeem's limits and fetch) in files of
// their own at the bottom, with contents.go (Contents and its interfaces);
// new.go (New, which registers the Import operation with its runner) near
// the top.
//
// It must never import app/web, app/api, app/cli, jobs, app/remote or a
// provider's subpackage.
package contents
