package ship

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/restic/chunker"

	"github.com/boxsnap/boxsnap/providers/local/store"
)

// ChunkAbove is the size past which a file's content ships as chunks.
const ChunkAbove = 4 << 20

// Pol is the chunker's polynomial, one for every host and every take, so
// the same bytes are cut into the same chunks wherever they ship from.
const Pol = chunker.Pol(0x3DA3358B4DC173)

// DirLists holds, under the backend's root, the chunk list of each large
// content file this host shipped or fetched, so a take that reuses the
// content need not read it again to name its chunks.
const DirLists = "lists"

// chunk is one content-defined part of a large file.
type chunk struct {
	sum      string
	off, len int64
}

// plan lists the objects m names but its manifest: a piece per small
// content, and per large one its chunks and their list. It runs at every
// take over every file of the snapshot, so it keeps to a slice sorted
// once: no map of every hash or key, and no content file's path made
// until its piece is put (piece.from).
func (s *Shipper) plan(ctx context.Context, m *store.Manifest) ([]piece, error) {
	all := contentOf(m)
	out := make([]piece, 0, len(all))
	// seen is the keys of the large contents' chunks: a chunk two large
	// files share, or one that is also a small file's content, is one
	// object.
	var seen map[string]bool
	for i, c := range all {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if c.n <= ChunkAbove {
			out = append(out, piece{key: s.Remote.Keys.ContentKey(c.hash), from: c.hash, n: c.n})
			continue
		}
		chunks, list, err := s.chunksOf(c.hash)
		if err != nil {
			return nil, err
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		for _, ch := range chunks {
			key := s.Remote.Keys.ContentKey(ch.sum)
			if seen[key] || isSmall(all, ch.sum) {
				continue
			}
			seen[key] = true
			out = append(out, piece{key: key, from: c.hash, off: ch.off, n: ch.len})
		}
		out = append(out, piece{key: s.Remote.Keys.ListKey(c.hash), data: list})
	}
	return out, nil
}

// sized is one content a manifest names, and its size.
type sized struct {
	hash string
	n    int64
}

// contentOf is every content m's files name, each once, sorted by hash.
func contentOf(m *store.Manifest) []sized {
	all := make([]sized, 0, len(m.Entries))
	for i := range m.Entries {
		if e := &m.Entries[i]; e.Type == store.TypeFile && e.Hash != "" {
			all = append(all, sized{e.Hash, e.Size})
		}
	}
	slices.SortFunc(all, func(a, b sized) int { return strings.Compare(a.hash, b.hash) })
	return slices.CompactFunc(all, func(a, b sized) bool { return a.hash == b.hash })
}

// isSmall says whether all (contentOf) holds h as a small content, which
// plan ships as a piece of its own.
func isSmall(all []sized, h string) bool {
	i, ok := slices.BinarySearchFunc(all, h, func(a sized, h string) int { return strings.Compare(a.hash, h) })
	return ok && all[i].n <= ChunkAbove
}

// chunksOf answers the chunks of content h and their list's bytes: from
// the list this host keeps, or by cutting the content file (and keeping
// its list).
func (s *Shipper) chunksOf(h string) ([]chunk, []byte, error) {
	listPath := s.Path(DirLists, h)
	if data, err := os.ReadFile(listPath); err == nil {
		if chunks, err := parseList(data); err == nil {
			return chunks, data, nil
		}
	}
	f, err := os.Open(s.ContentPath(h))
	if err != nil {
		return nil, nil, fmt.Errorf("content %s: %w", h[:12], err)
	}
	defer func() { _ = f.Close() }()
	chunks, err := cut(f)
	if err != nil {
		return nil, nil, fmt.Errorf("cut content %s into chunks: %w", h[:12], err)
	}
	data := formatList(chunks)
	if err := os.MkdirAll(s.Path(DirLists), 0o700); err == nil {
		_ = store.WriteFileAtomic(listPath, data, 0o600)
	}
	return chunks, data, nil
}

// cut cuts r into content-defined chunks of about 1 MiB.
func cut(r io.Reader) ([]chunk, error) {
	c := chunker.New(r, Pol)
	buf := make([]byte, chunker.MaxSize)
	var out []chunk
	var off int64
	for {
		ch, err := c.Next(buf)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(ch.Data)
		out = append(out, chunk{sum: hex.EncodeToString(sum[:]), off: off, len: int64(ch.Length)})
		off += int64(ch.Length)
	}
}

// formatList writes a chunk list: one line a chunk, its SHA-256 and
// length, in order.
func formatList(chunks []chunk) []byte {
	var b bytes.Buffer
	for _, c := range chunks {
		fmt.Fprintf(&b, "%s %d\n", c.sum, c.len)
	}
	return b.Bytes()
}

func parseList(data []byte) ([]chunk, error) {
	var out []chunk
	var off int64
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		sum, n, ok := strings.Cut(sc.Text(), " ")
		size, err := strconv.ParseInt(n, 10, 64)
		if !ok || err != nil || len(sum) != 64 || size <= 0 {
			return nil, fmt.Errorf("a chunk list's line %q is not a hash and a length", sc.Text())
		}
		out = append(out, chunk{sum: sum, off: off, len: size})
		off += size
	}
	return out, sc.Err()
}
