package qemu_test

import (
	"testing"

	"github.com/boxsnap/boxsnap/providers/providertest"
)

// TestQEMUConformance runs the provider contract against real guests on a
// private libvirtd.
func TestQEMUConformance(t *testing.T) {
	t.Parallel()
	providertest.Run(t, harness())
}
