package providers

import (
	"bytes"
	"io"
	"math/rand"
	"strings"
	"testing"
)

// TestSecretScanAcrossChunks finds a shape and a value wherever the read
// cuts them, and in a run longer than the scan keeps whole.
func TestSecretScanAcrossChunks(t *testing.T) {
	s := NewSecretScan()
	if err := s.AddValues(strings.NewReader("password=v4lueOfARemovedFile\n"), ".netrc"); err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x ", scanChunk/2-7)
	for text, want := range map[string]string{
		pad + "ghp_0123456789abcdefghijABCDEFGHIJ012345":   ShapeGitHub,
		pad + "-----BEGIN RSA PRIVATE KEY-----":            ShapePrivateKey,
		pad + " v4lueOfARemovedFile ":                      ValueOfWords(".netrc"),
		strings.Repeat("A", 5000) + "AKIAIOSFODNN7EXAMPLE": ShapeAWS,
		pad + "nothing here, sk-learn and AKIA":            "",
	} {
		got, err := s.Scan(io.MultiReader(strings.NewReader(text[:len(text)/2]), strings.NewReader(text[len(text)/2:])))
		if err != nil || got != want {
			t.Errorf("%.20s…: %q, %v; want %q", text[len(text)-30:], got, err, want)
		}
	}
}

// BenchmarkSecretScan100MB scans 100 MB of source-like text and random
// bytes, half each, with 1000 values to look for.
func BenchmarkSecretScan100MB(b *testing.B) {
	s := NewSecretScan()
	var vals bytes.Buffer
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 1000; i++ {
		for j := 0; j < 24; j++ {
			vals.WriteByte("abcdefghijklmnopqrstuvwxyz0123456789"[r.Intn(36)])
		}
		vals.WriteByte('\n')
	}
	_ = s.AddValues(&vals, "v")
	data := make([]byte, 100<<20)
	src := []byte("func (s *Server) handle(w http.ResponseWriter, r *http.Request) { return fmt.Sprintf(\"%s\", x) }\n")
	for i := 0; i < len(data)/2; i += len(src) {
		copy(data[i:], src)
	}
	r.Read(data[len(data)/2:])
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if what, err := s.Scan(bytes.NewReader(data)); err != nil || what != "" {
			b.Fatal(what, err)
		}
	}
}
