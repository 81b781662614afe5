package providers

import (
	"context"
	"encoding/json"
	"io/fs"
)

// Trasher is implemented by backends whose guest must be made inert while its
// box waits in the trash, beyond the stop every backend's Boxes.Stop gives:
// on Proxmox, onboot off and every link down, as an earlier guest is. The
// core stops the guest first.
type Trasher interface {
	// TrashGuest makes the stopped guest inert and answers what it set
	// aside, to give back to UntrashGuest.
	TrashGuest(ctx context.Context, g Guest) (json.RawMessage, error)
	// UntrashGuest gives back what TrashGuest set aside: its links up, and
	// onboot as it was.
	UntrashGuest(ctx context.Context, g Guest, aside json.RawMessage) error
}

// Resetter is implemented by backends that can make a box fresh again from
// the source it was made from, keeping its guest, its identity and its
// snapshots, and write a kept login back into it. The core takes the undo
// before, and stops the box.
type Resetter interface {
	// ResetGuest replaces everything in the stopped guest with a fresh copy
	// of spec's source (spec.Template; nothing is an empty box), with the
	// box's identity written again.
	ResetGuest(ctx context.Context, g Guest, spec BoxSpec) error
	// WriteBoxFile writes one file into the box at path (relative to the
	// box's folder), making its folders, through no link, with mode; it
	// replaces a file that is there.
	WriteBoxFile(ctx context.Context, g Guest, path string, data []byte, mode fs.FileMode) error
}

// Login is one tool's login files that a reset with Keep logins carries over
// each relative to a home-like folder of the box (see Homes).
type Login struct {
	Tool  string
	Files []string
}

// MaxLoginBytes is the largest login file a reset carries over: a larger
// one is skipped and said.
const MaxLoginBytes = 1 << 20

// ClaudeAccountFile is the one login file carried in part: only the account
// in it (AccountKeys), never the rest of what Claude Code keeps there.
const ClaudeAccountFile = ".claude.json"

// AccountKeys are the keys of ClaudeAccountFile that hold the account.
var AccountKeys = []string{"oauthAccount", "userID"}

// DefaultLogins is moatbox's list of the logins Keep logins carries over;
// the settings can add home paths.
func DefaultLogins() []Login {
	return []Login{
		{Tool: "Claude Code", Files: []string{".claude/.credentials.json", ClaudeAccountFile}},
		{Tool: "Codex", Files: []string{".codex/auth.json"}},
		{Tool: "opencode", Files: []string{".local/share/opencode/auth.json"}},
		{Tool: "GitHub CLI", Files: []string{".config/gh/hosts.yml"}},
	}
}
