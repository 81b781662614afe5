package providers

import "testing"

// TestStoreFullSaysSizes: the disk-full refusal says its sizes in units
// (it said "needs about 2097315").
func TestStoreFullSaysSizes(t *testing.T) {
	got := StoreFullWords(1048576, 2097315)
	if want := "The store has 1 MB free and this take needs about 2 MB"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	for n, want := range map[int64]string{1: "1 byte", 47: "47 bytes", 999: "999 bytes", 1499: "1 KB", 1500: "2 KB", 2097315: "2 MB", 1_234_567_890: "1.2 GB", 12e9: "12 GB"} {
		if got := GB(n); got != want {
			t.Fatalf("GB(%d) = %q, want %q", n, got, want)
		}
	}
}
