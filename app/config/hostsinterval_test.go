package config

import (
	"strings"
	"testing"
	"time"
)

// TestHostsInterval: each live host's own work is queued every 5 minutes
// unless BOXSNAP_HOSTS_INTERVAL (or --hosts-interval) says otherwise; a
// value that is no duration, or under 5 seconds, is refused in words that
// name the setting.
func TestHostsInterval(t *testing.T) {
	t.Parallel()
	c, err := load(t, nil)
	if err != nil || c.Intervals.Hosts != 5*time.Minute {
		t.Fatalf("the default: %s, %v", c.Intervals.Hosts, err)
	}
	c, err = load(t, map[string]string{"BOXSNAP_HOSTS_INTERVAL": "10s"})
	if err != nil || c.Intervals.Hosts != 10*time.Second {
		t.Fatalf("10s: %s, %v", c.Intervals.Hosts, err)
	}
	_, err = load(t, nil, "--hosts-interval", "1s")
	if err == nil || !strings.Contains(err.Error(), "--hosts-interval (BOXSNAP_HOSTS_INTERVAL) must be at least 5s, not 1s") {
		t.Errorf("1s: %v", err)
	}
	_, err = load(t, nil, "--hosts-interval", "often")
	if err == nil || !strings.Contains(err.Error(), `--hosts-interval (BOXSNAP_HOSTS_INTERVAL) must be a duration above zero such as 5m, not "often"`) {
		t.Errorf("often: %v", err)
	}
}
