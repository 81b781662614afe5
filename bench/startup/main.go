// Command startup measures the time from `boxsnap serve` to its first HTTP
// 200 on the embedded default: a first start (with initdb) and a warm start
// (the same data folder again), the median of several runs each.
//
//	go run ./bench/startup -binary bin/boxsnap -runs 5
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

func main() {
	binary := flag.String("binary", "bin/boxsnap", "the boxsnap binary")
	runs := flag.Int("runs", 5, "runs of each kind")
	flag.Parse()
	bin, err := filepath.Abs(*binary)
	if err != nil {
		fail(err)
	}
	var first, warm []time.Duration
	for i := 0; i < *runs; i++ {
		dir, err := os.MkdirTemp("", "boxsnap-startup-")
		if err != nil {
			fail(err)
		}
		d, err := serveOnce(bin, dir)
		if err != nil {
			fail(err)
		}
		first = append(first, d)
		d, err = serveOnce(bin, dir)
		if err != nil {
			fail(err)
		}
		warm = append(warm, d)
		_ = os.RemoveAll(dir)
	}
	fmt.Printf("boxsnap serve to its first HTTP 200, embedded default, %d runs each\n", *runs)
	fmt.Printf("  first start (initdb): median %v  (min %v, max %v)\n", median(first), slices.Min(first), slices.Max(first))
	fmt.Printf("  warm start:           median %v  (min %v, max %v)\n", median(warm), slices.Min(warm), slices.Max(warm))
}

// serveOnce starts boxsnap serve on dir, waits for /healthz to answer 200,
// then stops it with SIGTERM and waits for it to end.
func serveOnce(bin, dir string) (time.Duration, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve", "--data-dir", filepath.Join(dir, "data"), "--addr", addr, "--demo=false", "--log-format", "json")
	cmd.Env = append(os.Environ(), "BOXSNAP_PASSWORD=startup-benchmark")
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var took time.Duration
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				took = time.Since(start)
				break
			}
		}
		if ctx.Err() != nil {
			_ = cmd.Process.Kill()
			return 0, fmt.Errorf("no HTTP 200 within 60 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		return took, fmt.Errorf("serve ended: %w", err)
	}
	return took, nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "startup:", err)
	os.Exit(1)
}
