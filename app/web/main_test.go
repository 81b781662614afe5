package web

import (
	"os"
	"testing"

	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// TestMain gives each test a fresh database; a test that asks for a
// private libvirtd starts it, and it stops after every test.
func TestMain(m *testing.M) {
	os.Exit(qemutest.Main(runFunc(func() int { return dbtest.Main(m) })))
}

// runFunc runs a test binary's tests for qemutest.Main.
type runFunc func() int

func (f runFunc) Run() int { return f() }
