package hosts

import (
	"fmt"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// The words the hosts alone say: the refusals of a move, a takeover and a
// host marked gone, and the box log's events of a move and a takeover.

// notSharedWords: a move or a takeover of a box whose snapshots only its
// host reaches, in the core's words, which a fork asked on another host
// says too.
func notSharedWords(box, host string) string { return snapshots.NotSharedWords(box, host) }

// noOwnerWords: a move of a box that no host owns.
func noOwnerWords(box, backend string) string {
	return fmt.Sprintf("%s is on %s, which every host reaches; it has no host to move from.", box, backend)
}

// alreadyOnWords: a move to the host the box is on.
func alreadyOnWords(box, host string) string {
	return fmt.Sprintf("%s is already on host %s.", box, host)
}

// askOnTargetWords: a move asked of another host than the one the box goes
// to, which alone can make the box's guest on its own disk.
func askOnTargetWords(box, host string) string {
	return fmt.Sprintf("Move %s from host %s's own pages, API or CLI: the host a box moves to makes it on its disk.", box, host)
}

// takeOverOnTargetWords: a takeover asked of another host than the one the
// boxes go to.
func takeOverOnTargetWords(from, to string) string {
	return fmt.Sprintf("Take host %s's boxes over from host %s's own pages, API or CLI: the host boxes go to makes them on its disk.", from, to)
}

// unknownHostWords: a host that never ran boxsnap on this database.
func unknownHostWords(host string) string {
	return fmt.Sprintf("No host named %s has run boxsnap here; start boxsnap there with BOXSNAP_HOST=%s first.", host, host)
}

// hostGoneWords: a move to a host marked gone.
func hostGoneWords(host string) string {
	return fmt.Sprintf("Host %s is marked gone; move the box to a host that runs boxsnap.", host)
}

// stillAliveWords: a takeover from, or a mark of gone on, a host seen
// alive lately.
func stillAliveWords(host string, ago time.Duration) string {
	return fmt.Sprintf("Host %s was seen %s ago; a host still seen alive keeps its boxes. Stop boxsnap there, and wait %s.", host, agoWords(ago), agoWords(SeenAliveFor))
}

// notMarkedGoneWords: a takeover from a host no one marked gone.
func notMarkedGoneWords(host string) string {
	return fmt.Sprintf("Host %s is not marked gone; mark it gone for good first.", host)
}

// thisHostWords: a mark of gone on the host that serves the request.
func thisHostWords(host string) string {
	return fmt.Sprintf("Host %s is this host, and it runs; mark another host gone.", host)
}

// noSnapshotWords: a move or a takeover of a box with no ready snapshot.
func noSnapshotWords(box string) string {
	return fmt.Sprintf("%s has no ready snapshot to carry over; take one first.", box)
}

// notShippedWords: a move or a takeover of a box whose newest snapshot was
// taken before the content store was set, so is on its host alone, which
// ships such snapshots every so often (every; 0 is BackfillEvery).
func notShippedWords(box, snapshot, host string, every time.Duration) string {
	return fmt.Sprintf("%s's newest snapshot ‘%s’ is not in the content store yet: it was taken before the store was set. Host %s ships it within %s, oldest first; move the box once it is there.",
		box, snapshot, host, agoWords(orBackfillEvery(every)))
}

// orBackfillEvery is every, or BackfillEvery when every is not above 0.
func orBackfillEvery(every time.Duration) time.Duration {
	if every <= 0 {
		return BackfillEvery
	}
	return every
}

// busyWords: a move of a box with an operation running.
func busyWords(box string) string {
	return fmt.Sprintf("%s has an operation running; move it when that ends.", box)
}

// hostsPersonOnlyWords: the hosts asked by an agent, whose token reaches
// its own thread's boxes only (a host's count of boxes holds others').
const hostsPersonOnlyWords = "Only the person sees the hosts."

// personOnlyWords: a move or a takeover asked by an agent.
const personOnlyWords = "Only the person moves boxes between hosts and takes hosts over."

// Box log events of the hosts.
const (
	EvMovedHost = "moved-host"
	EvTakenOver = "taken-over"
	// EvEndedGone: an operation a gone host left, ended by a takeover.
	EvEndedGone = "ended-host-gone"
	// EvLeftReleased: a moved box's copy left on its old host, released
	// there.
	EvLeftReleased = "left-copy-released"
	// EvLeftFound: a released box's copy found on a host it left, kept.
	EvLeftFound = "left-copy-found"
)

// EndedGoneWords is the error of an operation a gone host left, which a
// takeover ends.
func EndedGoneWords(from, to string) string {
	return fmt.Sprintf("Ended: host %s, which ran it, is gone for good and will never finish it; host %s took the box over from its newest snapshot.", from, to)
}

// logEndedGoneWords: ended-host-gone, "which operation, and why".
func logEndedGoneWords(kind, from string) string {
	return fmt.Sprintf("the %s left running on host %s, gone, ended: it can never finish there", kind, from)
}

// leftWhy is boxsnap's reason for releasing a moved box's copy.
const leftWhy = "the box is owned by another host"

// logLeftReleasedWords: left-copy-released, "where, and whose the box is".
func logLeftReleasedWords(here, owner string) string {
	return fmt.Sprintf("its old copy on host %s released (its folder, state and process): the box is on host %s now", here, owner)
}

// foundWhy is boxsnap's reason for keeping a released box's copy found.
const foundWhy = "the box was released on another host while this one was away"

// logLeftFoundWords: left-copy-found, "where it is kept, and that it
// stays until the person deletes it".
func logLeftFoundWords(here, dir string) string {
	return fmt.Sprintf("its copy left on host %s was found there after its release: kept, its process stopped, in %s until you delete it", here, dir)
}

// logMovedWords: moved-host, "from where to where, from which snapshot".
func logMovedWords(from, to, snapshot string) string {
	return fmt.Sprintf("moved from host %s to host %s, restored there from ‘%s’", from, to, snapshot)
}

// logTakenOverWords: taken-over, "from the gone host, by which, from which
// snapshot".
func logTakenOverWords(from, to, snapshot string) string {
	return fmt.Sprintf("taken over from host %s, gone, by host %s, restored there from ‘%s’", from, to, snapshot)
}

// leftWords: a box a takeover left where it was, and why.
func leftWords(why string) string { return "left on its host: " + why }

// agoWords is a duration as a person reads it: seconds, minutes or hours.
func agoWords(d time.Duration) string {
	switch {
	case d < 2*time.Minute:
		return fmt.Sprintf("%d seconds", int(d.Seconds()))
	case d < 2*time.Hour:
		return fmt.Sprintf("%d minutes", int(d.Minutes()))
	default:
		return fmt.Sprintf("%d hours", int(d.Hours()))
	}
}

// MovingWords is what a person reads once a move is admitted.
func MovingWords(box, host string) string {
	return fmt.Sprintf("Moving %s to host %s, restored there from its newest snapshot.", box, host)
}

// MarkedGoneWords is what a person reads once a host is marked gone.
func MarkedGoneWords(host string, boxes int64) string {
	return fmt.Sprintf("Host %s is marked gone, with %d boxes; take them over on another host.", host, boxes)
}

// TakenOverWords is what a person reads of a takeover: how many boxes went
// and how many stayed.
func TakenOverWords(r *TakeOverResult) string {
	if len(r.Taken)+len(r.Left) == 0 {
		return fmt.Sprintf("Host %s owns no boxes.", r.From)
	}
	return fmt.Sprintf("Took over %d of host %s's boxes on host %s; left %d.", len(r.Taken), r.From, r.To, len(r.Left))
}

// UnshippedWords says how many snapshots on this host are not in the
// content store yet, and what happens to them, this host's work running
// every (BOXSNAP_HOSTS_INTERVAL; 0 is BackfillEvery): boxsnap doctor and
// the Hosts page say it.
func UnshippedWords(n int, every time.Duration) string {
	if n == 0 {
		return "Every snapshot on this host is in the content store."
	}
	what := fmt.Sprintf("%d snapshots on this host are", n)
	if n == 1 {
		what = "1 snapshot on this host is"
	}
	return fmt.Sprintf("%s not in the content store yet: taken before it was set, on this host alone. This host ships them, %d every %s, oldest first, while boxsnap serve or work runs here; until its newest is shipped, a box cannot move.",
		what, BackfillPerRun, agoWords(orBackfillEvery(every)))
}

// CacheWords says how much this host's content cache (a backend's
// content kept here as a cache of the bucket) holds against its bound and
// where the bound comes from, as of now: boxsnap doctor and the Hosts page
// say it. A count recorded earlier says when it was made; a look at the
// whole file system (u.UpTo) says the cache holds no more than that.
func CacheWords(u providers.CacheUse, now time.Time) string {
	held := snapshots.BinarySize(u.Held)
	verb, when := "holds", ""
	if !u.CountedAt.IsZero() {
		verb, when = "held", fmt.Sprintf(", when last counted %s ago", agoWords(max(now.Sub(u.CountedAt), 0)))
	}
	if u.Bound <= 0 {
		if u.UpTo {
			return fmt.Sprintf("This host's content cache has no bound (BOXSNAP_CONTENT_CACHE_SIZE is 0): it keeps all the content taken or fetched here, at most the %s the file system it is on holds.", held)
		}
		return fmt.Sprintf("This host's content cache %s %s%s and has no bound (BOXSNAP_CONTENT_CACHE_SIZE is 0): it keeps all the content taken or fetched here.", verb, held, when)
	}
	from := "BOXSNAP_CONTENT_CACHE_SIZE"
	if u.Percent > 0 {
		from = fmt.Sprintf("%d%% of the %s file system it is on, BOXSNAP_CONTENT_CACHE_SIZE", u.Percent, snapshots.BinarySize(u.FileSystem))
	}
	const past = "past the bound, a take, restore or fork ends by removing the content read longest ago that the bucket holds."
	if u.UpTo {
		return fmt.Sprintf("This host's content cache is within its bound of %s (%s): the whole file system it is on holds %s; %s",
			snapshots.BinarySize(u.Bound), from, held, past)
	}
	return fmt.Sprintf("This host's content cache %s %s of its bound of %s (%s), %d%% full%s; %s",
		verb, held, snapshots.BinarySize(u.Bound), from, u.Held*100/u.Bound, when, past)
}

// OwnedWords is the Hosts page's word on which boxes belong to a host:
// the boxes of the backends one names (kinds, each one host's:
// providers.OneHost) each belong to the host whose disk or daemon holds
// them, which alone runs their operations; those of the backends every
// names, every host reaches alike.
func OwnedWords(one, every []string) string {
	w := fmt.Sprintf("%s each belong to one host, whose disk or daemon holds them, and only that host runs their operations.", upperFirst(boxesWords(one)))
	if len(every) > 0 {
		w += fmt.Sprintf(" %s every host reaches alike, and any host runs their operations.", upperFirst(boxesWords(every)))
	}
	return w
}

// boxesWords names the boxes of backends of the kinds given, in order:
// "local boxes, QEMU boxes and Docker boxes".
func boxesWords(kinds []string) string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		switch k {
		case "local":
			names[i] = "local boxes"
		case "qemu":
			names[i] = "QEMU boxes"
		case "docker":
			names[i] = "Docker boxes"
		case "proxmox":
			names[i] = "Proxmox boxes"
		default:
			names[i] = k + " boxes"
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// upperFirst is s with its first letter a capital.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// noWorkerWords says that n jobs wait in host's queue and no worker of
// host's is alive to run them, and what to do: the Hosts page and the API
// say it.
func noWorkerWords(host string, n int64) string {
	what, them := fmt.Sprintf("%d jobs wait", n), "them"
	if n == 1 {
		what, them = "1 job waits", "it"
	}
	return fmt.Sprintf("%s for host %s and no worker of it is alive to run %s: start boxsnap work (or boxsnap serve with its workers) on %s, or move its boxes to another host.", what, host, them, host)
}
