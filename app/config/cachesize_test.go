package config

import (
	"strings"
	"testing"
)

// TestContentCacheSize: BOXSNAP_CONTENT_CACHE_SIZE bounds the cache by
// default (a quarter of its file system), takes a share or a size, keeps
// all with 0, and refuses anything else in words naming the setting.
func TestContentCacheSize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		value   string
		bytes   int64
		percent int
	}{
		{"", 0, 25}, // the default
		{"10%", 0, 10},
		{"90%", 0, 90},
		{"50GiB", 50 << 30, 0},
		{"500MiB", 500 << 20, 0},
		{"0", -1, 0},
	} {
		env := map[string]string{}
		if c.value != "" {
			env["BOXSNAP_CONTENT_CACHE_SIZE"] = c.value
		}
		got, err := load(t, env)
		if err != nil {
			t.Fatalf("%q: %v", c.value, err)
		}
		if got.ContentCacheBytes != c.bytes || got.ContentCachePercent != c.percent {
			t.Errorf("%q reads as %d bytes, %d%%; want %d bytes, %d%%", c.value, got.ContentCacheBytes, got.ContentCachePercent, c.bytes, c.percent)
		}
	}
	for _, bad := range []string{"0%", "91%", "-5%", "a quarter", "-1", "12%%"} {
		_, err := load(t, map[string]string{"BOXSNAP_CONTENT_CACHE_SIZE": bad})
		if err == nil || !strings.Contains(err.Error(), "BOXSNAP_CONTENT_CACHE_SIZE") || !strings.Contains(err.Error(), "25%") {
			t.Errorf("%q was not refused in words naming the setting: %v", bad, err)
		}
	}
}
