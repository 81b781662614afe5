package fork

import (
	"fmt"
	"strings"
	"time"

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

// forkNameUnusableWords refuses a new box's name a box the caller may not
// see holds, without saying that a box holds it.
func forkNameUnusableWords(name string) string {
	return fmt.Sprintf("The name %s cannot be used: choose another.", name)
}

// forkNamesUnusableWords refuses forks whose names include names boxes the
// caller may not see hold; none of them is made.
func forkNamesUnusableWords(names []string) string {
	if len(names) == 1 {
		return forkNameUnusableWords(names[0]) + " No fork was made."
	}
	return fmt.Sprintf("The names %s cannot be used: choose another. No fork was made.", strings.Join(names, ", "))
}

// forkCountReusedWords refuses a repeated request ID whose first call made
// another count of forks (made: how many; 0 when it made more).
func forkCountReusedWords(requestID string, made int) string {
	if made == 0 {
		return fmt.Sprintf("Request %s made more forks than this call asks for: send it with its first count, or use a new request.", requestID)
	}
	return fmt.Sprintf("Request %s made %d forks, not this many: send it with its first count, or use a new request.", requestID, made)
}

// logForkWords: fork-asked and forked, "the source and the new box".
func logForkWords(name, box string) string { return fmt.Sprintf("‘%s’ as %s", name, box) }

// logForkFailedWords: fork-failed, with why.
func logForkFailedWords(name, box, why string) string {
	return fmt.Sprintf("‘%s’ as %s: %s", name, box, why)
}

// logForkedFromWords: the new box's own log starts with made, "Forked
// from (source), (snapshot) (taken …)".
func logForkedFromWords(source, name string, taken time.Time, tz *time.Location) string {
	return fmt.Sprintf("Forked from %s, ‘%s’ (taken %s)", source, name, taken.In(tz).Format("2 Jan 15:04"))
}

// failForkRecordWords: a fork whose new box boxsnap could not record.
func failForkRecordWords(box string, err error) string {
	return fmt.Sprintf("boxsnap could not record the new box %s: %v", box, err)
}

// forkRoomWords refuses count forks (and the take before them) that need
// more than where has free: "local-lvm has 4.5 GB free, and the fork
// needs about 5.0 GB.", or "… and the 3 forks need about 13.0 GB.", or,
// where forks share one copy of their snapshot's files, "… and the 3
// forks need about 5.0 GB: one copy of the files, which they share", and
// where each fork has a disk of its own besides, "…, and the disk each
// fork has of its own."
func forkRoomWords(where string, free, need int64, count int, shared, ownDisks bool) string {
	if count > 1 && shared {
		own := ""
		if ownDisks {
			own = ", and the disk each fork has of its own"
		}
		return fmt.Sprintf("%s has %s free, and the %d forks need about %s: one copy of the files, which they share%s.", where, snapshots.GB(free), count, snapshots.GB(need), own)
	}
	if count > 1 {
		return fmt.Sprintf("%s has %s free, and the %d forks need about %s.", where, snapshots.GB(free), count, snapshots.GB(need))
	}
	return fmt.Sprintf("%s has %s free, and the fork needs about %s.", where, snapshots.GB(free), snapshots.GB(need))
}

// forkNoRoomWords: a fork whose backend ran out of disk room part-way;
// what it had made is gone.
const forkNoRoomWords = "The disk ran out of room while the fork was made (no space left on device): nothing of it was kept. Make room on the host, then fork again."

// notShippedWords: a fork asked on another host of a snapshot its box's
// host has not shipped to the content store yet.
func notShippedWords(box, snapshot, host string) string {
	return fmt.Sprintf("%s's snapshot ‘%s’ is on host %s only until that host ships it to the content store; fork it on host %s, or try again later.",
		box, snapshot, host, host)
}

// forkNowElsewhereWords: a fork of a box as it is now asked on another
// host than the box's own.
func forkNowElsewhereWords(box, host string) string {
	return fmt.Sprintf("%s is on host %s: fork it as it is now from host %s's own pages, API or CLI, or fork one of its ready snapshots here.",
		box, host, host)
}

// LandsHereWords: the fork dialog on a snapshot of a box another host
// owns says where the new box lands.
func LandsHereWords(box, owner, here string) string {
	return fmt.Sprintf("It lands on this host, %s, which owns it: %s is on host %s, and the snapshot's files come from the content store.",
		here, box, owner)
}

// oneHostForkWords refuses a fork asked on another host of a snapshot of
// box, whose guest and snapshots are in host's own backend (QEMU's
// libvirtd, a Docker engine on a unix socket), which no content store
// carries.
func oneHostForkWords(box, host, backend string) string {
	return fmt.Sprintf("%s's snapshots are in host %s's own %s backend, out of this host's reach, and no content store carries them: fork it on host %s, or export one of its snapshots there and import it here.", box, host, backend, host)
}
