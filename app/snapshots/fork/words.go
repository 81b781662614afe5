package fork

import (
	"fmt"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// refusal is a refusal of code in words written here or in the core's
// words.go.
func refusal(code snapshots.Code, words string) *snapshots.Refusal {
	return &snapshots.Refusal{Code: code, Words: words}
}

// forkCountWords refuses a count of forks out of its range.
func forkCountWords(count, most int) string {
	return fmt.Sprintf("A fork makes 1 to %d boxes in one call, not %d.", most, count)
}

// forkNamesTakenWords refuses forks whose names boxes hold already; none
// of them is made.
func forkNamesTakenWords(taken []string) string {
	if len(taken) == 1 {
		return snapshots.BoxExistsWords(taken[0]) + " No fork was made."
	}
	return fmt.Sprintf("Boxes named %s exist already. No fork was made.", strings.Join(taken, ", "))
}

// forkCountReusedWords refuses a repeated request ID whose first call made
// another count of forks (made: how many; 0 when it made more).
func forkCountReusedWords(requestID string, made int) string {
	if made == 0 {
		return fmt.Sprintf("Request %s made more forks than this call asks for: send it with its first count, or use a new request.", requestID)
	}
	return fmt.Sprintf("Request %s made %d forks, not this many: send it with its first count, or use a new request.", requestID, made)
}
