package pictures_test

import (
	"os"
	"testing"

	"github.com/boxsnap/boxsnap/app/dbtest"
)

// TestMain runs the tests on the private PostgreSQL dbtest starts, for the
// tests of the pictures kept with a running core.
func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }
