package ship

// The words of a take the content store stops.
const (
	shipFailedWords = "snapshot %s is kept on this host but not yet in the content store, so it is not ready: %w"
)

// The words of the doctor's check of a pack against the ledger.
const (
	packMissingWords = "pack %s is not in the bucket, yet the ledger records objects in it (%d)"
	packSizeWords    = "pack %s holds %d bytes in the bucket; the ledger records %d"
	packIndexWords   = "pack %s does not end in an index boxsnap can read"
	packObjectWords  = "object %s lies at %d (%d bytes) in pack %s by the ledger, not by the pack's own index"
)
