package config

import (
	"strings"
	"testing"
	"time"
)

// TestRetryKeysKeptFor: the retry keys are kept 7 days unless
// BOXSNAP_RETRY_KEYS_KEPT_FOR (or --retry-keys-kept-for) says otherwise;
// a value that is no duration, or under an hour, is refused in words
// that name the setting.
func TestRetryKeysKeptFor(t *testing.T) {
	t.Parallel()
	c, err := load(t, nil)
	if err != nil || c.RetryKeysKeptFor != 7*24*time.Hour {
		t.Fatalf("the default: %s, %v", c.RetryKeysKeptFor, err)
	}
	c, err = load(t, map[string]string{"BOXSNAP_RETRY_KEYS_KEPT_FOR": "48h"})
	if err != nil || c.RetryKeysKeptFor != 48*time.Hour {
		t.Fatalf("48h: %s, %v", c.RetryKeysKeptFor, err)
	}
	for _, bad := range []string{"a week", "10m", "-1h"} {
		_, err := load(t, nil, "--retry-keys-kept-for", bad)
		if err == nil || !strings.Contains(err.Error(), `--retry-keys-kept-for (BOXSNAP_RETRY_KEYS_KEPT_FOR) must be a duration of at least 1h such as 168h, not "`+bad+`"`) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
