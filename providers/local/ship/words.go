package ship

// The words of a take the content store stops.
const (
	shipFailedWords = "snapshot %s is kept on this host but not yet in the content store, so it is not ready: %w"
)
