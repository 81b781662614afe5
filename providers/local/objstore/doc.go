// Package objstore is the local backend's content store in an S3 bucket:
// where its settings say the bucket is (Config, parsed from
// BOXSNAP_CONTENT_STORE's s3://bucket/prefix and the endpoint, region, keys
// and TLS beside it), the small interface the backend reaches it through
// (Objects: put, get with its hash checked, head, delete; RangeGetter: a
// ranged get of part of a pack), one answer of that interface on minio-go
// (Bucket), the keys of a content object, a manifest, a label, a chunk
// list and a pack in the bucket, and the refusals in words a bad bucket
// gets: unreachable, wrong keys, no such bucket, no room, a missing or
// corrupt object, a TLS certificate this host does not trust, plain HTTP
// where HTTPS was asked.
//
// Keys and secrets never appear in its errors or its logs.
//
// It imports only the standard library, minio-go and providers; it must
// never import app/..., jobs, package local or another backend.
package objstore
