package ship

// The words of a take or restore the content store stops.
const (
	shipFailedWords  = "snapshot %s is kept on this host but not yet in the content store, so it is not ready: %w"
	fetchFailedWords = "snapshot %s cannot be read from the content store: %w. Nothing was changed."
)
