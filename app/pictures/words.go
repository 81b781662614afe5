package pictures

import (
	"fmt"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// The words a person or an agent reads from the snapshots' pictures, and
// from nowhere else: the kernel's words.go says the words the kernel and
// the other seams share.

// refusal is a refusal in words of this file.
func refusal(code snapshots.Code, words string) *snapshots.Refusal {
	return &snapshots.Refusal{Code: code, Words: words}
}

// noPictureWords: a snapshot taken without a picture of the screen.
func noPictureWords(name string) string { return fmt.Sprintf("‘%s’ has no picture.", name) }
