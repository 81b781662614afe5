package tab

import "github.com/boxsnap/boxsnap/app/snapshots"

// refusal is a refusal with its code and words.
func refusal(code snapshots.Code, words string) *snapshots.Refusal {
	return &snapshots.Refusal{Code: code, Words: words}
}

const (
	// sortIsWords refuses a sort the tab has not.
	sortIsWords = "sort is newest, oldest, largest, price or box."
	// onlyPersonSeesCountsWords refuses the install's counts to any but
	// the person.
	onlyPersonSeesCountsWords = "Only the person sees the whole install's counts."
)
