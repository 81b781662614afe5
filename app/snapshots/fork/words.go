package fork

import "github.com/boxsnap/boxsnap/app/snapshots"

// refusal is a refusal of code in words written here or in the core's
// words.go.
func refusal(code snapshots.Code, words string) *snapshots.Refusal {
	return &snapshots.Refusal{Code: code, Words: words}
}
