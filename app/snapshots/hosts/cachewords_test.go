package hosts

import (
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/internal/wordshape"
	"github.com/boxsnap/boxsnap/providers"
)

// TestCacheWords: the content cache's words say what it holds, its bound
// and where the bound comes from (a share of the file system by default,
// a size, or none), as full sentences; a count recorded earlier says when
// it was made, and a look at the whole file system says the cache is
// within its bound.
func TestCacheWords(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		u    providers.CacheUse
		want string
	}{
		{providers.CacheUse{Held: 3 << 30, Bound: 16 << 30, Percent: 25, FileSystem: 64 << 30},
			"This host's content cache holds 3 GiB of its bound of 16 GiB (25% of the 64 GiB file system it is on, BOXSNAP_CONTENT_CACHE_SIZE), 18% full; past the bound, a take, restore or fork ends by removing the content read longest ago that the bucket holds."},
		{providers.CacheUse{Held: 512 << 20, Bound: 1 << 30, FileSystem: 64 << 30},
			"This host's content cache holds 512 MiB of its bound of 1 GiB (BOXSNAP_CONTENT_CACHE_SIZE), 50% full; past the bound, a take, restore or fork ends by removing the content read longest ago that the bucket holds."},
		{providers.CacheUse{Held: 5 << 30, FileSystem: 64 << 30},
			"This host's content cache holds 5 GiB and has no bound (BOXSNAP_CONTENT_CACHE_SIZE is 0): it keeps all the content taken or fetched here."},
		{providers.CacheUse{Held: 3 << 30, Bound: 16 << 30, Percent: 25, FileSystem: 64 << 30, CountedAt: now.Add(-5 * time.Minute)},
			"This host's content cache held 3 GiB of its bound of 16 GiB (25% of the 64 GiB file system it is on, BOXSNAP_CONTENT_CACHE_SIZE), 18% full, when last counted 5 minutes ago; past the bound, a take, restore or fork ends by removing the content read longest ago that the bucket holds."},
		{providers.CacheUse{Held: 10 << 30, Bound: 16 << 30, Percent: 25, FileSystem: 64 << 30, UpTo: true},
			"This host's content cache is within its bound of 16 GiB (25% of the 64 GiB file system it is on, BOXSNAP_CONTENT_CACHE_SIZE): the whole file system it is on holds 10 GiB; past the bound, a take, restore or fork ends by removing the content read longest ago that the bucket holds."},
		{providers.CacheUse{Held: 10 << 30, FileSystem: 64 << 30, UpTo: true},
			"This host's content cache has no bound (BOXSNAP_CONTENT_CACHE_SIZE is 0): it keeps all the content taken or fetched here, at most the 10 GiB the file system it is on holds."},
	} {
		got := CacheWords(c.u, now)
		wordshape.Check(t, got)
		if got != c.want || !strings.HasSuffix(got, ".") {
			t.Errorf("%+v:\n got %q\nwant %q", c.u, got, c.want)
		}
	}
}

// TestOwnedWords: the Hosts page's word on whose boxes belong to a host
// names the one-host backends' boxes, and those every host reaches, as
// full sentences.
func TestOwnedWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		one, every []string
		want       string
	}{
		{[]string{"local"}, nil,
			"Local boxes each belong to one host, whose disk or daemon holds them, and only that host runs their operations."},
		{[]string{"local", "qemu", "docker"}, []string{"proxmox"},
			"Local boxes, QEMU boxes and Docker boxes each belong to one host, whose disk or daemon holds them, and only that host runs their operations. Proxmox boxes every host reaches alike, and any host runs their operations."},
	} {
		got := OwnedWords(c.one, c.every)
		wordshape.Check(t, got)
		if got != c.want {
			t.Errorf("%v, %v:\n got %q\nwant %q", c.one, c.every, got, c.want)
		}
	}
}
