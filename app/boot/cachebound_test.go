package boot

import (
	"io"
	"testing"

	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/providers/local"
)

// TestContentCacheDefaultIsTheBackends: BOXSNAP_CONTENT_CACHE_SIZE's
// default share is the one the local backend takes when none is set, so
// the setting's help, the README and a backend made without the setting
// say one bound.
func TestContentCacheDefaultIsTheBackends(t *testing.T) {
	t.Parallel()
	cfg, _, err := config.Load("serve", nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ContentCacheBytes != 0 || cfg.ContentCachePercent != local.DefaultCachePercent {
		t.Fatalf("the setting's default reads as %d bytes, %d%%; the local backend's default is %d%%", cfg.ContentCacheBytes, cfg.ContentCachePercent, local.DefaultCachePercent)
	}
}
