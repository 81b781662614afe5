package providers

import (
	"bytes"
	"errors"
	"io"
	"path"
	"regexp"
	"strings"
)

// Finding is a credential a share copy would still hold where it cannot be
// removed: the path in the box that holds it and what it is, in words
// ("a GitHub token"). It never holds the value itself.
type Finding struct {
	Path string `json:"path"`
	What string `json:"what"`
}

// ScrubReport is what a share copy of a snapshot is: the paths it leaves
// out, and the credentials it would still hold (Blocked), each by its path.
// A copy with one Blocked is never made.
type ScrubReport struct {
	Removed []string  `json:"removed"`
	Blocked []Finding `json:"blocked"`
}

// SecretName says whether a file of this name is removed wherever it is in
// a box, not only in a home: .env (but its examples), .git-credentials and
// .netrc hold credentials by what they are.
func SecretName(name string) bool {
	switch name {
	case ".env", ".git-credentials", ".netrc", "_netrc":
		return true
	}
	if rest, ok := strings.CutPrefix(name, ".env."); ok {
		switch rest {
		case "example", "sample", "template", "dist", "defaults":
			return false
		}
		return true
	}
	return false
}

// notAValueSource are removed files whose values are public: the scan does
// not look for them elsewhere.
func notAValueSource(p string) bool {
	base := path.Base(p)
	return strings.HasSuffix(base, ".pub") || base == "known_hosts" || base == "known_hosts.old" || base == "authorized_keys"
}

// The scan reads text as runs of token characters; a run of at least
// minValue of them, with a letter and a digit, is a value.
const (
	minValue = 12
	// maxRun is the longest run kept whole; a longer one is checked for the
	// shapes window by window, and is no value.
	maxRun = 1024
	// keepRun is what a window of a long run carries into the next.
	keepRun = 128
	// MaxValueSource is how much of a removed file gives values.
	MaxValueSource = 1 << 20
	// maxValues bounds the values looked for.
	maxValues = 200000
	scanChunk = 64 << 10
)

var tokenByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	t['+'], t['/'], t['_'], t['-'] = true, true, true, true
	return t
}()

// The well-known shapes of credentials, found in runs of token characters.
var shapes = []struct {
	re   *regexp.Regexp
	what string
	hint []string
}{
	{regexp.MustCompile(`(AKIA|ASIA)[0-9A-Z]{16}`), ShapeAWS, []string{"AKIA", "ASIA"}},
	{regexp.MustCompile(`(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,}`), ShapeGitHub, []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}},
	{regexp.MustCompile(`sk-ant-[A-Za-z0-9_-]{20,}`), ShapeAnthropic, []string{"sk-ant-"}},
	{regexp.MustCompile(`sk-[A-Za-z0-9_-]{32,}`), ShapeOpenAI, []string{"sk-"}},
}

var privateKey = regexp.MustCompile(`-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----`)

// SecretScan finds credentials in what it reads, streaming, in bounded
// memory: the well-known shapes (private key headers; AWS access keys;
// GitHub, Anthropic and OpenAI tokens) and the values of files a copy
// removes (AddValues).
type SecretScan struct {
	values map[string]string // a value, to the removed file that holds it
}

// NewSecretScan is a scan for the well-known shapes only, so far.
func NewSecretScan() *SecretScan { return &SecretScan{values: map[string]string{}} }

// Values is how many values the scan looks for.
func (s *SecretScan) Values() int { return len(s.values) }

// AddValues adds the values of a removed file (from names it), up to
// MaxValueSource of it: each run of at least 12 token characters with a
// letter and a digit. Public keys and known hosts give none.
func (s *SecretScan) AddValues(r io.Reader, from string) error {
	if notAValueSource(from) {
		return nil
	}
	return runs(io.LimitReader(r, MaxValueSource), func(run []byte, whole bool) bool {
		if whole && isValue(run) && len(s.values) < maxValues {
			if _, ok := s.values[string(run)]; !ok {
				s.values[string(run)] = from
			}
		}
		return true
	}, nil)
}

// Scan reads r to its end, or to the first credential it holds, and says
// what that is ("" for none).
func (s *SecretScan) Scan(r io.Reader) (string, error) {
	what := ""
	err := runs(r, func(run []byte, whole bool) bool {
		what = s.inRun(run, whole)
		return what == ""
	}, func(window []byte) bool {
		if bytes.Contains(window, []byte("PRIVATE KEY")) && privateKey.Match(window) {
			what = ShapePrivateKey
		}
		return what == ""
	})
	return what, err
}

// ScanString is Scan of a short text: a link's target, a path.
func (s *SecretScan) ScanString(text string) string {
	what, _ := s.Scan(strings.NewReader(text))
	return what
}

func (s *SecretScan) inRun(run []byte, whole bool) string {
	if len(run) >= 20 {
		for _, sh := range shapes {
			for _, h := range sh.hint {
				if bytes.Contains(run, []byte(h)) {
					if sh.re.Match(run) {
						return sh.what
					}
					break
				}
			}
		}
	}
	if whole && len(run) >= minValue {
		if from, ok := s.values[string(run)]; ok {
			return ValueOfWords(from)
		}
	}
	return ""
}

func isValue(run []byte) bool {
	if len(run) < minValue {
		return false
	}
	letter, digit := false, false
	for _, c := range run {
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			letter = true
		}
	}
	return letter && digit
}

var errStop = errors.New("stop")

// runs reads r chunk by chunk, giving each run of token characters to onRun
// (whole: the run was not cut for its length) and each chunk, with the end
// of the one before, to onWindow; either stops the read by answering false.
func runs(r io.Reader, onRun func(run []byte, whole bool) bool, onWindow func(window []byte) bool) error {
	buf := make([]byte, 64+scanChunk)
	run := make([]byte, 0, maxRun)
	long := false
	carry := 0
	err := func() error {
		for {
			n, rerr := r.Read(buf[carry : carry+scanChunk])
			chunk := buf[carry : carry+n]
			for _, c := range chunk {
				if tokenByte[c] {
					if len(run) == maxRun {
						if !onRun(run, false) {
							return errStop
						}
						copy(run, run[maxRun-keepRun:])
						run, long = run[:keepRun], true
					}
					run = append(run, c)
					continue
				}
				if len(run) > 0 {
					if !onRun(run, !long) {
						return errStop
					}
					run, long = run[:0], false
				}
			}
			if onWindow != nil && n > 0 && !onWindow(buf[:carry+n]) {
				return errStop
			}
			// Keep the end of this chunk before the next, for a header cut
			// in two.
			if end := carry + n; end > 64 {
				copy(buf, buf[end-64:end])
				carry = 64
			} else {
				carry = end
			}
			if rerr == io.EOF {
				if len(run) > 0 && !onRun(run, !long) {
					return errStop
				}
				return nil
			}
			if rerr != nil {
				return rerr
			}
		}
	}()
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// BlockedError refuses a share copy that would still hold a credential
// where it cannot be removed; it names each file.
type BlockedError struct{ Blocked []Finding }

func (e *BlockedError) Error() string {
	parts := make([]string, len(e.Blocked))
	for i, f := range e.Blocked {
		parts[i] = f.Path + " (" + f.What + ")"
	}
	return "a copy would still hold credentials in " + strings.Join(parts, ", ")
}
