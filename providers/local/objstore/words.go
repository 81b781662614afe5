package objstore

// The words of the content store's refusals: each names the store by its
// endpoint and bucket (never its keys) and says what to do.
const (
	unreachableWords = "the content store at %s does not answer (%s): start it, or set BOXSNAP_CONTENT_STORE_ENDPOINT to where it listens"
	wrongKeysWords   = "the content store at %s refused boxsnap's keys for bucket %q: set BOXSNAP_CONTENT_STORE_ACCESS_KEY and BOXSNAP_CONTENT_STORE_SECRET_KEY (or its _FILE) to a key pair that may read and write it"
	noBucketWords    = "the content store at %s has no bucket %q: make it (for example: aws s3 mb s3://%s), or set BOXSNAP_CONTENT_STORE to a bucket that is there"
	noRoomWords      = "the content store at %s has no room for more in bucket %q: delete snapshots to free objects, or give the bucket more room, then take again"
	missingWords     = "the content store's bucket %q lacks object %s that this snapshot names: the snapshot is damaged"
	corruptWords     = "the content store's object %s in bucket %q does not match its hash: the snapshot is damaged"
	untrustedWords   = "the content store at %s offers a TLS certificate boxsnap does not trust (%s): set BOXSNAP_CONTENT_STORE_CA_FILE to the PEM certificate of the CA that signed it, or give the server a certificate this host trusts"
	plainHTTPWords   = "the content store at %s answers plain HTTP, not HTTPS: set BOXSNAP_CONTENT_STORE_ENDPOINT to http://%s, or serve it over TLS"
	storeFailedWords = "the content store at %s failed on bucket %q (%s %s)"
	badStoreURLWords = "BOXSNAP_CONTENT_STORE must be s3://bucket or s3://bucket/prefix, not %q"
	noEndpointWords  = "BOXSNAP_CONTENT_STORE needs BOXSNAP_CONTENT_STORE_ENDPOINT, the server's host:port (or https://host:port)"
	noKeysWords      = "BOXSNAP_CONTENT_STORE needs BOXSNAP_CONTENT_STORE_ACCESS_KEY and BOXSNAP_CONTENT_STORE_SECRET_KEY (or BOXSNAP_CONTENT_STORE_SECRET_KEY_FILE)"
	badCAFileWords   = "BOXSNAP_CONTENT_STORE_CA_FILE: %s holds no PEM certificate"
	readCAFileWords  = "BOXSNAP_CONTENT_STORE_CA_FILE: cannot read %s: %w"
)
