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
	"sort"
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
// content, and per large one its chunks and their list.
func (s *Shipper) plan(ctx context.Context, m *store.Manifest) ([]piece, error) {
	sizes := map[string]int64{}
	for _, e := range m.Entries {
		if e.Type == store.TypeFile && e.Hash != "" {
			sizes[e.Hash] = e.Size
		}
	}
	hashes := make([]string, 0, len(sizes))
	for h := range sizes {
		hashes = append(hashes, h)
	}
	sort.Strings(hashes)
	seen := map[string]bool{}
	var out []piece
	add := func(p piece) {
		if !seen[p.key] {
			seen[p.key] = true
			out = append(out, p)
		}
	}
	for _, h := range hashes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		path := s.ContentPath(h)
		if sizes[h] <= ChunkAbove {
			add(piece{key: s.Remote.Keys.ContentKey(h), path: path, n: sizes[h]})
			continue
		}
		chunks, list, err := s.chunksOf(h)
		if err != nil {
			return nil, err
		}
		for _, c := range chunks {
			add(piece{key: s.Remote.Keys.ContentKey(c.sum), path: path, off: c.off, n: c.len})
		}
		add(piece{key: s.Remote.Keys.ListKey(h), data: list})
	}
	return out, nil
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
