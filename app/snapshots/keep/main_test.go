package keep_test

import (
	"os"
	"testing"

	"github.com/boxsnap/boxsnap/app/dbtest"
)

// TestMain runs the tests on the private PostgreSQL dbtest starts.
func TestMain(m *testing.M) {
	os.Exit(dbtest.Main(m))
}
