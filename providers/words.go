package providers

import "fmt"

// NoResetWords is the one home of why a snapshot taken without the identity
// reset neither forks nor is kept, and of what fixes it (the close-out:
// refresh the image and make the box again). It ends with a full stop.
func NoResetWords(box string) string {
	return fmt.Sprintf("Taken before %s's image had the identity reset: it could not be forked after a release. To fork or keep, refresh the image, make the box again from it and take a new snapshot.", box)
}

// GB says a size in GB, as providers bill: "47 bytes", "2 KB", "2 MB", "1.2
// GB". It is the one home of a size in words (snapshots.GB says it), and of
// its one rounding rule, Shown: below 1 KB a size is said in bytes, above it
// rounded half up to the unit shown, so a small snapshot never reads as 1 KB.
func GB(n int64) string {
	s := Shown(n)
	switch {
	case n == 1:
		return "1 byte"
	case n < 1000:
		return fmt.Sprintf("%d bytes", n)
	case n < 1e6:
		return fmt.Sprintf("%d KB", s/1e3)
	case n < 1e8:
		return fmt.Sprintf("%d MB", s/1e6)
	case n < 1e10:
		return fmt.Sprintf("%d.%d GB", s/1e9, s/1e8%10)
	}
	return fmt.Sprintf("%d GB", s/1e9)
}

// Shown is n bytes as GB says them: n below 1 KB, else n rounded half up
// to the unit GB shows (a KB, an MB, a tenth of a GB, a GB). The database
// rounds the tab's totals with shown_bytes, its twin. A total said above
// rows a person reads is the sum of the rows' Shown, so "1 KB" and "1 KB"
// make "2 KB" where the bytes make 2.8 KB.
func Shown(n int64) int64 {
	unit := int64(1e9)
	switch {
	case n < 1000:
		return n
	case n < 1e6:
		unit = 1e3
	case n < 1e8:
		unit = 1e6
	case n < 1e10:
		unit = 1e8
	}
	return (n + unit/2) / unit * unit
}

// StoreFullWords is why a take is refused when its store lacks the room:
// "The store has 1 MB free and this take needs about 2 MB".
func StoreFullWords(free, need int64) string {
	return fmt.Sprintf("The store has %s free and this take needs about %s", GB(free), GB(need))
}

// What a share copy's scan found, in words (Finding.What).
const (
	ShapePrivateKey = "a private key"
	ShapeAWS        = "an AWS access key"
	ShapeGitHub     = "a GitHub token"
	ShapeAnthropic  = "an Anthropic key"
	ShapeOpenAI     = "an OpenAI key"
)

// ValueOfWords is a Finding's What for a value of a removed file: "a value
// of .git-credentials".
func ValueOfWords(from string) string { return "a value of " + from }

// AccessFileWords is what a backend's SetStraight answers it changed when
// it wrote the box's access file: "set straight: its access file".
const AccessFileWords = "its access file"

// What is wrong with an archive an import was given, when it cannot be read
// whole: each a clause that follows "Archive 2 of the batch: ", for a person
// who holds the file and can fetch it again.
const (
	ArchiveEmptyWords    = "it is empty: the file holds no byte of an archive"
	ArchiveNotGzipWords  = "it is not a boxsnap archive: it does not begin as a gzip-compressed file does"
	ArchiveCutShortWords = "it is cut short: it ends part-way through, so it was not copied or downloaded whole; fetch it again"
	ArchiveDamagedWords  = "it is damaged: its compressed bytes no longer read back as they were written, so some changed after it was made; fetch it again"
	ArchiveNotTarWords   = "it is damaged: what it holds is not laid out as boxsnap writes an archive"
	ArchiveTrailerWords  = "it has more bytes after its end, so it is not the file boxsnap wrote"
)
