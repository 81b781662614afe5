// Package ship keeps the local backend's snapshots in the content store
// (an S3 bucket, package objstore) beside the host's folder: a take ships
// its content and then its manifest (Ship), and a restore or fork fetches
// the content the host lacks, each object checked against its hash
// (Fetch). A file larger than ChunkAbove ships as content-defined chunks
// (github.com/restic/chunker, about 1 MiB each) and a list of them, so a
// small change to a large file ships only the chunks it touched.
//
// Content objects up to PackBelow (every small file and every chunk) are
// put in packs of about PackTarget, many objects to one PUT, when the
// Ledger also records packs (PackLedger): a pack is the objects' bytes one
// after another, then its own index (a line per object: its SHA-256,
// offset and length), then a fixed-length trailer naming where the index
// starts. The ledger records where each object lies; the index in each
// pack is what would rebuild that record from the bucket alone (there is
// no separate index object, unlike restic's). A pack is claimed in the
// ledger before its put and recorded after it, so a put that did not
// finish records nothing in it and a take again ships what it held. A
// fetch (Fetch) groups what it lacks by pack and reads it by ranged GETs,
// several at once, each object checked by its SHA-256; FetchTo hands each
// piece, checked, to its caller as it comes, so a restore writes its
// files while the rest are still coming. Repacker rewrites the live
// objects of packs the ledger found mostly freed into a new pack of the
// same form, each checked by its SHA-256 as it is read back; the ledger
// decides which, and when the old ones go.
//
// What is in the bucket and which snapshot names which object is recorded
// through a Ledger (PostgreSQL in boxsnap), never learnt by listing the
// bucket: a take claims every key it will ship before it asks whether the
// object is there, and names them once its manifest is in the bucket. A
// take names its keys over its base (the box's previous snapshot, when
// this host shipped it): it neither claims nor puts the keys the base
// holds, and the ledger records only how the two differ; when the base
// was deleted meanwhile, the take claims, puts and names all it holds.
//
// It imports only the standard library, restic's chunker, providers,
// objstore and store; it must never import app/..., jobs, package local or
// another backend.
package ship
