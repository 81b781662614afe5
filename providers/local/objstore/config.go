package objstore

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path"
	"strings"
)

// Config says where the content store is and how to reach it. SecretKey
// is never printed: String and the refusals leave it out.
type Config struct {
	Bucket string // the bucket's name
	Prefix string // the folder in the bucket every key starts with ("" or "a/b/")
	// Endpoint is the server: host:port (HTTPS) or http://host:port or
	// https://host:port.
	Endpoint  string
	Region    string // "" lets the client ask the server
	AccessKey string
	SecretKey string
	CAFile    string // PEM certificates to trust for HTTPS; "" the system's
}

// ParseURL reads BOXSNAP_CONTENT_STORE's s3://bucket/prefix into the
// bucket and a prefix ending in "/" (or "").
func ParseURL(s string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(s, "s3://")
	if !ok {
		return "", "", fmt.Errorf(badStoreURLWords, s)
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	if !validBucket(bucket) {
		return "", "", fmt.Errorf(badStoreURLWords, s)
	}
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		if path.Clean(prefix) != prefix || strings.HasPrefix(prefix, ".") {
			return "", "", fmt.Errorf(badStoreURLWords, s)
		}
		prefix += "/"
	}
	return bucket, prefix, nil
}

// validBucket holds S3's rule for a bucket's name: 3 to 63 lower-case
// letters, digits, dots and hyphens, a letter or digit at each end.
func validBucket(b string) bool {
	if len(b) < 3 || len(b) > 63 {
		return false
	}
	for i, c := range b {
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || i == len(b)-1 || c != '.' && c != '-') {
			return false
		}
	}
	return true
}

// Check says what the settings lack, in words.
func (c Config) Check() error {
	if c.Endpoint == "" {
		return errors.New(noEndpointWords)
	}
	if c.AccessKey == "" || c.SecretKey == "" {
		return errors.New(noKeysWords)
	}
	return nil
}

// String names the store without its keys.
func (c Config) String() string {
	return fmt.Sprintf("s3://%s/%s at %s", c.Bucket, c.Prefix, c.hostPort())
}

// secure says whether the endpoint is reached over HTTPS: always but for
// an explicit http://.
func (c Config) secure() bool { return !strings.HasPrefix(c.Endpoint, "http://") }

// hostPort is the endpoint without its scheme.
func (c Config) hostPort() string {
	e := strings.TrimPrefix(strings.TrimPrefix(c.Endpoint, "http://"), "https://")
	return strings.TrimSuffix(e, "/")
}

// transport is the HTTP transport for HTTPS with the CA file's
// certificates, or nil for the client's default.
func (c Config) transport() (http.RoundTripper, error) {
	if c.CAFile == "" || !c.secure() {
		return nil, nil
	}
	pem, err := os.ReadFile(c.CAFile)
	if err != nil {
		return nil, fmt.Errorf(readCAFileWords, c.CAFile, errors.Unwrap(err))
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf(badCAFileWords, c.CAFile)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return t, nil
}

// ContentKey is the key of the content object whose SHA-256 is hash.
func (c Config) ContentKey(hash string) string {
	return c.Prefix + "content/" + hash[:2] + "/" + hash[2:]
}

// LabelKey is the key of a snapshot's label.
func (c Config) LabelKey(snapshotID string) string {
	return c.Prefix + "labels/" + snapshotID
}

// ManifestKey is the key of a snapshot's manifest.
func (c Config) ManifestKey(snapshotID string) string {
	return c.Prefix + "manifests/" + snapshotID
}

// ListKey is the key of the list of chunks a large file's content ships
// as, named by the whole content's SHA-256.
func (c Config) ListKey(hash string) string {
	return c.Prefix + "lists/" + hash[:2] + "/" + hash[2:]
}
