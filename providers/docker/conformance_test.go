package docker_test

import (
	"testing"

	"github.com/boxsnap/boxsnap/providers/providertest"
)

// TestDockerConformance runs the provider contract against a private dockerd.
func TestDockerConformance(t *testing.T) {
	t.Parallel()
	providertest.Run(t, harness())
}
