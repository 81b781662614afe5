package cli_test

import (
	"context"
	"testing"

	"github.com/boxsnap/boxsnap/app/cli"
)

// TestCLIForkCountBelowOne: `snapshot fork --count 0` and a negative
// count are refused in words and fork nothing (only a count left out is
// one fork); a count that is no number is refused by the flag itself.
func TestCLIForkCountBelowOne(t *testing.T) {
	t.Parallel()
	g := setup(t)
	ctx := context.Background()
	_, agent, _ := g.Thread(t, "Fork none")
	g.Box(t, agent, "amber-fox")
	g.ok(t, "take", "amber-fox", "--name", "v1")
	boxes := func() int {
		t.Helper()
		var n int
		if err := g.Pool.QueryRow(ctx, `SELECT count(*) FROM boxes`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := boxes()
	for _, count := range []string{"0", "-2"} {
		code, _, errw := g.run(t, g.env(), "fork", "amber-fox", "v1", "--count", count)
		if code != cli.ExitRefused {
			t.Fatalf("fork --count %s: exit %d, %q", count, code, errw)
		}
		says(t, errw, "--count is how many boxes to fork into, 1 or more; leave it out for one.")
	}
	if code, _, errw := g.run(t, g.env(), "fork", "amber-fox", "v1", "--count", "two"); code == 0 {
		t.Fatalf("fork --count two: exit 0, %q", errw)
	}
	if got := boxes(); got != before {
		t.Fatalf("refused counts made %d boxes", got-before)
	}
}
