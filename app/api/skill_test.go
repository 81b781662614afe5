package api_test

import (
	"os"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/api"
)

// TestSkillInReadme keeps the README's copy of the skill the same as the one
// served at /api/v1/skill and over MCP, and checks it says what an agent must
// know: when to take, when to restore, and asking the person.
func TestSkillInReadme(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const open, end = "<!-- skill: app/api/skill.md -->\n", "<!-- /skill -->"
	_, rest, ok := strings.Cut(string(raw), open)
	in, _, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("the README has no skill between %q and %q", open, end)
	}
	if in != api.Skill() {
		t.Fatalf("the README's skill differs from app/api/skill.md: copy it again:\n%s", api.Skill())
	}
	for _, words := range []string{"before a change you cannot undo", "when the person asks", "Never take snapshots on a schedule of your own",
		"restore", "Delete your own snapshots", "Never restore a box threads run on", "end your turn", "Never answer a question boxsnap asks the person"} {
		if !strings.Contains(api.Skill(), words) {
			t.Errorf("the skill does not say %q", words)
		}
	}
}

// TestSkillServed answers the skill at /api/v1/skill to a thread's token.
func TestSkillServed(t *testing.T) {
	t.Parallel()
	e := setup(t)
	token, _ := e.agent(t, "Read the skill")
	a := e.call(t, "GET", "/skill", token, nil).must(t, 200)
	if string(a.Raw) != api.Skill() {
		t.Fatalf("/skill answered %q", a.Raw)
	}
	e.call(t, "GET", "/skill", "", nil).must(t, 401)
}
