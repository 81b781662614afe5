package api

import (
	_ "embed"
	"net/http"
)

// skill is the agents' skill (when to take, when to restore,
// never on a schedule of its own, delete its own, ask through the approval
// and end the turn on a box threads run on, never answer an approval), in
// boxsnap's words. It is served at /api/v1/skill, given as the MCP server's
// instructions, and printed in the README (a test keeps the README's copy
// the same).
//
//go:embed skill.md
var skill string

// Skill is the agents' skill, as Markdown.
func Skill() string { return skill }

// serveSkill answers the skill as Markdown.
func serveSkill(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	_, _ = w.Write([]byte(skill))
}
