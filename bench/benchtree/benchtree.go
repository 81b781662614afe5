// Package benchtree makes the trees of files the benchmarks under bench/
// run boxsnap and its competitors on: the same sizes, names and content for
// the same arguments, so every program measures on the same data.
package benchtree

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// Build writes files files of random content, size bytes in all, into dir:
// sizes log-uniform from 100 B to 4 MiB, and one file in 500 from 4 to 40
// MiB, in 20 folders of folders two deep. It answers the files' paths,
// relative to dir.
func Build(dir string, size int64, files int) ([]string, error) {
	rng := rand.New(rand.NewPCG(4, 2))
	sizes := make([]float64, files)
	var sum float64
	for i := range sizes {
		s := math.Exp(math.Log(100) + rng.Float64()*(math.Log(4<<20)-math.Log(100)))
		if rng.IntN(500) == 0 {
			s = float64(4<<20) + rng.Float64()*float64(36<<20)
		}
		sizes[i] = s
		sum += s
	}
	scale := float64(size) / sum
	folders := max(1, min(200, files/100))
	var paths []string
	var written int64
	for i := range sizes {
		n := int64(sizes[i] * scale)
		if i == len(sizes)-1 {
			n = size - written
		}
		written += n
		rel := filepath.Join(fmt.Sprintf("d%02d", i%20), fmt.Sprintf("s%03d", i%folders), fmt.Sprintf("f%06d.dat", i))
		if err := WriteRandom(filepath.Join(dir, rel), n, uint64(i)); err != nil {
			return nil, err
		}
		paths = append(paths, rel)
	}
	return paths, nil
}

// WriteRandom writes n bytes of content that seed decides to p, making its
// folders.
func WriteRandom(p string, n int64, seed uint64) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	buf := make([]byte, n)
	_, _ = rand.NewChaCha8(key).Read(buf)
	return os.WriteFile(p, buf, 0o644)
}

// Churn rewrites 1% of the files, chosen by seed, with new content of the
// same size, and answers their paths.
func Churn(dir string, paths []string, seed uint64) ([]string, error) {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []string
	for _, i := range rng.Perm(len(paths))[:len(paths)/100] {
		p := filepath.Join(dir, paths[i])
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if err := WriteRandom(p, fi.Size(), seed<<20|uint64(i)); err != nil {
			return nil, err
		}
		out = append(out, paths[i])
	}
	return out, nil
}
