package snapshots_test

import (
	"os"
	"testing"

	"github.com/boxsnap/boxsnap/app/dbtest"
)

// TestMain runs the tests, or, when a test starts this binary as a worker
// process (workerEnv set), a boxsnap worker that the test can kill.
func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		os.Exit(runWorkerProcess())
	}
	os.Exit(dbtest.Main(m))
}
