package contentledger

// The ledger's words.
const (
	freedMeanwhileWords = "snapshot %s could not name its objects in the content store: a sweep freed one of them while it shipped (its claim ran out); take it again"
)
