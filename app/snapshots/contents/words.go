package contents

import (
	"fmt"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// The words a person or an agent reads from Contents alone: what a
// snapshot's files, a comparison, an export, an import, a share code and a
// redeem from another boxsnap say, and their box log events. Each is
// written once, here; the words the kernel or another seam also says stay
// in package snapshots' words.go.

// CannotBrowseWords is why a backend without a Browser cannot show a
// snapshot's files: the words of the disabled items, and of the refusal.
func CannotBrowseWords(backend string) string {
	return fmt.Sprintf("%s cannot list a snapshot's files through its API: restore or fork the snapshot to look inside it.", backend)
}

// ChangesWords says a comparison's counts: "14 files changed, 2 added, 1
// removed since then", or "Nothing changed since then".
func ChangesWords(changed, added, removed int, against *snapshots.Snapshot) string {
	since := "since then"
	if against != nil {
		since = "in ‘" + against.Name + "’"
	}
	if changed+added+removed == 0 {
		return "Nothing changed " + since
	}
	files := "files"
	if changed == 1 {
		files = "file"
	}
	return fmt.Sprintf("%d %s changed, %d added, %d removed %s", changed, files, added, removed, since)
}

// withoutWords ends a sentence on what a copy left out: ", without
// .git-credentials", or, when it left out nothing, ": it held none of the
// files a copy leaves out" (never "without nothing").
func withoutWords(removed []string) string {
	if len(removed) == 0 {
		return ": it held none of the files a copy leaves out"
	}
	return ", without " + removedWords(removed)
}

// removedWords says what a copy leaves out.
func removedWords(removed []string) string {
	switch len(removed) {
	case 0:
		return "nothing (it held none of the files a copy leaves out)"
	case 1:
		return removed[0]
	}
	return fmt.Sprintf("%d paths (%s)", len(removed), strings.Join(removed, ", "))
}

// importWords says what an import did: what is new, what was here
// already, and the box it made.
func importWords(res *ImportResult) string {
	var fresh, already int
	for _, sn := range res.Snapshots {
		if sn.Already {
			already++
		} else {
			fresh++
		}
	}
	var w string
	switch {
	case fresh == 0:
		w = fmt.Sprintf("Nothing new: %s holds %s already.", res.BoxName, plural(already, "this snapshot", "these %d snapshots"))
	case already == 0:
		w = fmt.Sprintf("Imported %s into %s.", plural(fresh, "1 snapshot", "%d snapshots"), res.BoxName)
	default:
		w = fmt.Sprintf("Imported %s into %s; %d %s here already.", plural(fresh, "1 snapshot", "%d snapshots"), res.BoxName, already, plural(already, "was", "were"))
	}
	if res.Made {
		if res.MadeFrom != "" {
			w += fmt.Sprintf(" %s is a new box here, made from ‘%s’.", res.BoxName, res.MadeFrom)
		} else {
			w += fmt.Sprintf(" %s is a new box here, empty: restore one of its snapshots into it.", res.BoxName)
		}
	}
	return w
}

// logMadeByImportWords: made, for a box an import made; from is the
// snapshot it was made from, or "" for an empty box.
func logMadeByImportWords(from string) string {
	if from == "" {
		return "made by an import, empty"
	}
	return fmt.Sprintf("made by an import, from ‘%s’", from)
}

// logExportedWords: exported; base is the snapshot the receiver holds, or
// "".
func logExportedWords(names []string, base string) string {
	w := "exported " + QuotedNames(names)
	if base != "" {
		w += fmt.Sprintf(", leaving out what ‘%s’ holds", base)
	}
	return w
}

// logImportedWords: imported; other where the files came from another
// install.
func logImportedWords(names []string, other bool) string {
	w := "imported nothing new"
	if len(names) > 0 {
		w = "imported " + QuotedNames(names)
	}
	if other {
		w += " from another install"
	}
	return w
}

// logSharedWords: share-code-made.
func logSharedWords(name string, until time.Time, removed []string, tz *time.Location) string {
	return fmt.Sprintf("a share code for ‘%s’, until %s, leaving out %s", name, until.In(tz).Format("2 Jan 15:04"), removedWords(removed))
}

// logShareRevokedWords: share-code-revoked.
const logShareRevokedWords = "a share code revoked"

// logShareRedeemedWords: share-code-redeemed.
func logShareRedeemedWords(name string, removed []string) string {
	return fmt.Sprintf("a copy of ‘%s’ handed out%s", name, withoutWords(removed))
}

// logDownloadedWords: downloaded, a file (with its size) or a folder (as a
// tar.gz) of a snapshot.
func logDownloadedWords(path string, size int64, folder bool, name string) string {
	what := fmt.Sprintf("%s (%s)", path, snapshots.GB(size))
	if folder {
		what = path + " as a tar.gz"
	}
	return fmt.Sprintf("%s of ‘%s’", what, name)
}

const failImportParams = "the import's params are unreadable"

// failImportWords: an import the backend failed.
func failImportWords(err error) string { return fmt.Sprintf("the import failed: %v", err) }

const noShareCodeHereWords = "No share code like that works here."

const shareRevokedWords = "This share code was revoked."

const shareSnapshotGoneWords = "The snapshot of this share code is gone."

func cannotBeSharedWords(name, state string) string {
	return fmt.Sprintf("‘%s’ is %s: it cannot be shared.", name, state)
}

// cannotShareSecretsWords: a share code's copy leaves the secrets out; a
// backend that cannot make one shares nothing.
func cannotShareSecretsWords(backend string) string {
	return fmt.Sprintf("%s cannot share snapshots: boxsnap cannot make a copy without its secrets there.", backend)
}

func cannotShareWords(backend string) string {
	return fmt.Sprintf("%s cannot share snapshots.", backend)
}

func noLiveShareCodeWords(id string) string { return fmt.Sprintf("No live share code %s.", id) }

func notAShareCodeWords(prefix string, length int) string {
	return fmt.Sprintf("That is not a share code: one starts with %s and is %d characters long.", prefix, length)
}

func shareExpiredWords(at string) string { return fmt.Sprintf("This share code expired on %s.", at) }

func shareSnapshotIsWords(state string) string {
	return fmt.Sprintf("The snapshot of this share code is %s.", state)
}

// BlockedWords says why a snapshot cannot be shared: a credential stays in
// files boxsnap does not remove, named each.
func BlockedWords(fs []providers.Finding) string {
	return fmt.Sprintf("%s: boxsnap cannot remove a credential from %s, so nothing is shared and no code is made. Take the credential out of the box, take a new snapshot and share that.", BlockedWord, findingsWords(fs))
}

// shareCodesFullWords: at most MaxLiveShares live codes at a time.
func shareCodesFullWords(most int) string {
	return fmt.Sprintf("This boxsnap already has %d live share codes, the most it holds at a time: revoke one to make another.", most)
}

const remoteAddressWords = "The other boxsnap's address is its name, such as https://boxsnap.example or boxsnap.example:8080."

const remoteNoSecretsWords = "Give the other boxsnap's address without a name or password in it."

const remoteNotSetUpWords = "This boxsnap cannot redeem a code from another boxsnap: it was started without a way to reach one."

func remoteUnreachableWords(host string) string {
	return fmt.Sprintf("boxsnap could not reach %s. Nothing was imported.", host)
}

func remoteRedirectWords(host string) string {
	return fmt.Sprintf("%s answered with a redirect, which boxsnap does not follow: give the address of the boxsnap itself. Nothing was imported.", host)
}

func remoteSlowWords(host string, d time.Duration) string {
	return fmt.Sprintf("%s did not answer within %s. Nothing was imported.", host, d)
}

func remoteTooBigWords(host string, most int64) string {
	return fmt.Sprintf("The copy from %s is over %s, the most boxsnap takes. Nothing was imported.", host, snapshots.GB(most))
}

func remoteNoCodeWords(host string) string {
	return fmt.Sprintf("%s has no live share code like that: it is wrong, revoked or expired. Nothing was imported.", host)
}

func remoteRefusedWords(host string) string {
	return fmt.Sprintf("%s refused the code. Nothing was imported.", host)
}

func remoteNotBoxsnapWords(host string) string {
	return fmt.Sprintf("%s did not answer as a boxsnap does. Nothing was imported.", host)
}

const notAPathWords = "That path is not a path."

const pathTooLongWords = "That path is longer than 4096 characters."

const topFolderWords = "The top folder is a folder: browse it instead."

const nameAFileWords = "Name a file to compare."

// NothingInsideWords says why a snapshot that is not ready has no files to
// look at: the refusal, and why Look inside is disabled.
func NothingInsideWords(name, state string) string {
	return fmt.Sprintf("‘%s’ is %s: there is nothing to look inside.", name, state)
}

// backendSaysWords: a backend's own reason, as one sentence.
func backendSaysWords(why string) string { return strings.TrimSuffix(why, ".") + "." }

func noPathInWords(path, name string) string { return fmt.Sprintf("No %s in ‘%s’.", path, name) }

func cannotBeReadWords(name, why string) string {
	return fmt.Sprintf("‘%s’ cannot be read: %s", name, why)
}

func absolutePathWords(p string) string {
	return fmt.Sprintf("The path %q is absolute: paths are inside the snapshot, relative to the box's folder.", p)
}

func climbsOutWords(p string) string {
	return fmt.Sprintf("The path %q climbs out of the snapshot with ..: paths are inside the box's folder.", p)
}

func linkNeverFollowedWords(path, target string) string {
	return fmt.Sprintf("%s is a link to %s, which is never followed: download what it points to instead.", path, target)
}

func notFileOrFolderWords(path string) string {
	return fmt.Sprintf("%s is not a file or a folder.", path)
}

// NoBoxToCompareWords: a box that is not ready has no now to compare a
// snapshot with (the refusal, and why Compare is disabled on its rows).
func NoBoxToCompareWords(box string, state snapshots.BoxState) string {
	return fmt.Sprintf("%s is %s: there is no box now to compare with.", box, state)
}

func compareSameBoxWords(name string) string {
	return fmt.Sprintf("‘%s’ is of another box: compare snapshots of the same box.", name)
}

func nothingToCompareWords(name, state string) string {
	return fmt.Sprintf("‘%s’ is %s: there is nothing to compare with.", name, state)
}

const nameOneToExportWords = "Name at least one snapshot to export."

const chooseImportWords = "Choose at least one export file to import."

const importFailedWords = "The import failed."

// cannotExportWords: boxsnap reads a snapshot where it lives.
func cannotExportWords(backend string) string {
	return fmt.Sprintf("%s cannot export snapshots: boxsnap reads its snapshots only where they live.", backend)
}

func cannotBeExportedWords(name, state string) string {
	return fmt.Sprintf("‘%s’ is %s: it cannot be exported.", name, state)
}

func cannotBeBaseWords(name, state string) string {
	return fmt.Sprintf("‘%s’ is %s: it cannot be a base.", name, state)
}

func exportedAndBaseWords(name string) string {
	return fmt.Sprintf("‘%s’ is both exported and the base: a base is one the receiver already holds.", name)
}

// badArchiveWords: what is wrong with an export file; nothing changes.
func badArchiveWords(file, why string) string {
	return fmt.Sprintf("%s: %s. Nothing was imported.", file, why)
}

// What is wrong with an export file that cannot be read whole, each after
// its name (badArchiveWords), for a person who holds the file and can fetch
// it again.
const (
	exportEmptyWords      = "it is empty: the file holds no byte of an export file"
	exportCutShortWords   = "it is cut short: it ends part-way through, so it was not copied, downloaded or uploaded whole; fetch it again"
	exportDamagedWords    = "it is damaged, or it is not a boxsnap export file: its bytes are not laid out as boxsnap writes one"
	exportTrailerWords    = "it has more bytes after its end, so it is not the file boxsnap wrote"
	exportManifestWords   = "its manifest is damaged: it is not the JSON boxsnap writes"
	exportNoManifestWords = "it has no manifest (" + ExportManifestName + "): it is cut short or not a boxsnap export file"
)

// exportUnreadWords: an export file whose reading failed on its way here
// (an upload or a download broke), with the reader's words.
func exportUnreadWords(err error) string {
	return fmt.Sprintf("it could not be read to its end (%v)", err)
}

func importRunningWords(op, step string) string {
	return snapshots.RunningWords(snapshots.OpImport, op, step)
}

func importOneBoxWords(file, box, other, otherBox string) string {
	return fmt.Sprintf("%s is of box %s and %s of box %s: import each box's files apart. Nothing was imported.", file, box, other, otherBox)
}

func releasedNoImportWords(box string) string {
	return fmt.Sprintf("%s was released here: its snapshots cannot be imported into it. Nothing was imported.", box)
}

func noBackendImportsWords(kind string) string {
	return fmt.Sprintf("No backend here imports snapshots of a %s box. Nothing was imported.", kind)
}

// CannotImportWords: a backend with no importer, in the refusal and the
// import's check.
func CannotImportWords(backend string) string {
	return fmt.Sprintf("%s cannot import snapshots. Nothing was imported.", backend)
}

func alreadyHereWords(id, box string) string {
	return fmt.Sprintf("Snapshot %s is here already, on %s. Nothing was imported.", id, box)
}

// BlockedWord is the share dialog's word for a copy that would still hold a
// credential where boxsnap cannot remove it.
const BlockedWord = "Blocked"

// findingsWords names each file that blocks a copy and what it holds:
// "src/app.go (a GitHub token), notes.txt (a value of .git-credentials)".
func findingsWords(fs []providers.Finding) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Path + " (" + f.What + ")"
	}
	return strings.Join(parts, ", ")
}

// plural is one when n is 1, else many with n in its %d (if any).
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	if strings.Contains(many, "%d") {
		return fmt.Sprintf(many, n)
	}
	return many
}

// QuotedNames says names in ‘’, between commas.
func QuotedNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "‘" + n + "’"
	}
	return strings.Join(q, ", ")
}
