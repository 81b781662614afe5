// Package ship keeps the local backend's snapshots in the content store
// (an S3 bucket, package objstore) beside the host's folder: a take ships
// its content and then its manifest (Ship), and a restore or fork fetches
// the content the host lacks, each object checked against its hash
// (Fetch). A file larger than ChunkAbove ships as content-defined chunks
// (github.com/restic/chunker, about 1 MiB each) and a list of them, so a
// small change to a large file ships only the chunks it touched.
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
