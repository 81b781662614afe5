package objstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/boxsnap/boxsnap/providers"
)

var (
	// ErrMissing means an object a snapshot names is not in the bucket.
	ErrMissing = errors.New("object missing from the content store")
	// ErrCorrupt means an object's bytes do not match the hash it is named by.
	ErrCorrupt = errors.New("object corrupt in the content store")
)

// ObjectError is a missing or corrupt object: the snapshot that names it
// is damaged. It wraps ErrMissing or ErrCorrupt, and providers.ErrIncomplete.
type ObjectError struct {
	Key string
	err error
}

func (e *ObjectError) Error() string { return e.err.Error() }
func (e *ObjectError) Unwrap() []error {
	return []error{e.err, providers.ErrIncomplete}
}

// refuse turns the client's error on key into a refusal in words: the
// store unreachable (providers.ErrUnreachable), keys refused, no such
// bucket, a TLS certificate not trusted, plain HTTP where HTTPS was asked
// (providers.ErrRefused), no room (providers.ErrNoRoom, to try
// again), a missing object (ErrMissing). The client's own text is kept
// only where it holds no key: a network error's.
func (b *Bucket) refuse(err error, op, key string) error {
	where := b.cfg.hostPort()
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("the content store at %s: %s %s: %w", where, op, key, err)
	}
	r := minio.ToErrorResponse(err)
	switch r.Code {
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken", "ExpiredToken":
		return &providers.RefusedError{Why: fmt.Sprintf(wrongKeysWords, where, b.cfg.Bucket)}
	case "NoSuchBucket":
		return &providers.RefusedError{Why: fmt.Sprintf(noBucketWords, where, b.cfg.Bucket, b.cfg.Bucket)}
	case "NoSuchKey":
		return &ObjectError{Key: key, err: fmt.Errorf(missingWords+": %w", b.cfg.Bucket, key, ErrMissing)}
	case "InsufficientStorage", "QuotaExceeded", "XMinioStorageFull", "EntityTooLarge":
		return fmt.Errorf(noRoomWords+": %w", where, b.cfg.Bucket, &roomError{})
	}
	if r.StatusCode == http.StatusInsufficientStorage {
		return fmt.Errorf(noRoomWords+": %w", where, b.cfg.Bucket, &roomError{})
	}
	if r.StatusCode == http.StatusForbidden {
		return &providers.RefusedError{Why: fmt.Sprintf(wrongKeysWords, where, b.cfg.Bucket)}
	}
	if r.Code != "" || r.StatusCode != 0 {
		return fmt.Errorf(storeFailedWords, where, b.cfg.Bucket, r.Code, http.StatusText(r.StatusCode))
	}
	if why, ok := untrustedCertificate(err); ok {
		return &providers.RefusedError{Why: fmt.Sprintf(untrustedWords, where, why)}
	}
	// net/http says so in words alone, no error of its own to match.
	if strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
		return &providers.RefusedError{Why: fmt.Sprintf(plainHTTPWords, where, where)}
	}
	var ne net.Error
	var ue *url.Error
	if errors.As(err, &ne) || errors.As(err, &ue) {
		why := "no answer"
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Err != nil {
			why = oe.Err.Error()
		}
		return fmt.Errorf(unreachableWords+": %w", where, why, providers.ErrUnreachable)
	}
	return fmt.Errorf(storeFailedWords, where, b.cfg.Bucket, op, key)
}

// untrustedCertificate says why the server's TLS certificate was not
// trusted, where that is what err is.
func untrustedCertificate(err error) (string, bool) {
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) && cv.Err != nil {
		return cv.Err.Error(), true
	}
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	switch {
	case errors.As(err, &ua):
		return ua.Error(), true
	case errors.As(err, &he):
		return he.Error(), true
	case errors.As(err, &ci):
		return ci.Error(), true
	}
	return "", false
}

// roomError is the store's lack of room: providers.ErrNoRoom, for now.
type roomError struct{}

func (*roomError) Error() string { return "no room" }
func (*roomError) Is(target error) bool {
	return target == providers.ErrNoRoom
}

// Corrupt is the refusal of an object whose bytes, or what they make
// with others (a large file's chunks), do not match the hash they are
// named by.
func Corrupt(cfg Config, key string) error {
	return &ObjectError{Key: key, err: fmt.Errorf(corruptWords+": %w", key, cfg.Bucket, ErrCorrupt)}
}
