package contentledger

import (
	"os"
	"testing"

	"github.com/boxsnap/boxsnap/app/dbtest"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }
