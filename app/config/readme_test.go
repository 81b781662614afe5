package config

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEListsEverySetting keeps the README's configuration table true:
// every setting's variable and flag is in it.
func TestREADMEListsEverySetting(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, s := range Settings() {
		if !strings.Contains(readme, "`"+s.Env+"`") {
			t.Errorf("README does not list %s", s.Env)
		}
		if s.Flag != "" && !strings.Contains(readme, "`--"+s.Flag+"`") {
			t.Errorf("README does not list --%s", s.Flag)
		}
	}
}
