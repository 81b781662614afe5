package snapshots

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCoreSpeaksNoHTTP: the core says what a refusal is with a code; the
// API and the web choose its status. So neither the core, nor its seam
// packages (contents), nor anything they import imports net/http.
func TestCoreSpeaksNoHTTP(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".", "./contents").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "net/http" || strings.HasPrefix(dep, "net/http/") {
			t.Errorf("the core imports %s", dep)
		}
	}
}
