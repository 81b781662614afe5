// Command signin floods a real `boxsnap serve` with wrong passwords and
// measures what a right sign-in from another address costs meanwhile: 16
// concurrent wrong passwords from 127.0.0.1 for 30 s, beside one right
// sign-in from 127.0.0.2 every 2 s, all on loopback. It prints the server
// process's peak memory (VmHWM; the embedded PostgreSQL's own processes are
// not counted) and the right sign-ins' median time. Aims: under 200 MB and
// under 1 s.
//
//	go build -o bin/boxsnap . && go run ./bench/signin -binary bin/boxsnap
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const password = "sign-in-benchmark-password"

func main() {
	binary := flag.String("binary", "bin/boxsnap", "the boxsnap binary")
	flood := flag.Duration("for", 30*time.Second, "how long the flood lasts")
	wrong := flag.Int("wrong", 16, "concurrent wrong passwords")
	every := flag.Duration("every", 2*time.Second, "a right sign-in from another address this often")
	flag.Parse()
	bin, err := filepath.Abs(*binary)
	if err != nil {
		fail(err)
	}
	dir, err := os.MkdirTemp("", "boxsnap-signin-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve", "--data-dir", filepath.Join(dir, "data"), "--addr", addr, "--demo=false", "--log-level", "error")
	cmd.Env = append(os.Environ(), "BOXSNAP_PASSWORD="+password)
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	if err := waitUp(addr); err != nil {
		fail(err)
	}
	base := memory(cmd.Process.Pid, "VmRSS")

	flooder := client("127.0.0.1")
	owner := client("127.0.0.2")
	// The right sign-in's time with no flood, on this machine as it is now.
	var alone []time.Duration
	for range 5 {
		start := time.Now()
		if code := signIn(context.Background(), owner, addr, password); code != http.StatusSeeOther {
			fail(fmt.Errorf("the right password answered %d with no flood", code))
		}
		alone = append(alone, time.Since(start))
	}
	slices.Sort(alone)
	ctx, cancel := context.WithTimeout(context.Background(), *flood)
	defer cancel()
	var statuses sync.Map
	var sent atomic.Int64
	var wg sync.WaitGroup
	for i := range *wrong {
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				code := signIn(ctx, flooder, addr, fmt.Sprintf("wrong password %d-%d", i, n))
				sent.Add(1)
				v, _ := statuses.LoadOrStore(code, new(atomic.Int64))
				v.(*atomic.Int64).Add(1)
			}
		})
	}
	var right []time.Duration
	var refused int
	tick := time.NewTicker(*every)
	defer tick.Stop()
	for ctx.Err() == nil {
		start := time.Now()
		code := signIn(context.Background(), owner, addr, password)
		if code == http.StatusSeeOther {
			right = append(right, time.Since(start))
		} else {
			refused++
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
		}
	}
	wg.Wait()
	peak := memory(cmd.Process.Pid, "VmHWM")

	fmt.Printf("sign-in flood: %d concurrent wrong passwords from 127.0.0.1 for %v (%d requests), one right sign-in from 127.0.0.2 every %v\n", *wrong, *flood, sent.Load(), *every)
	var codes []string
	statuses.Range(func(k, v any) bool {
		codes = append(codes, fmt.Sprintf("%d: %d", k, v.(*atomic.Int64).Load()))
		return true
	})
	slices.Sort(codes)
	fmt.Printf("  the flood's answers:            %s\n", strings.Join(codes, ", "))
	fmt.Printf("  server memory (boxsnap serve):  %.0f MB before, peak %.0f MB (aim: under 200 MB)\n", base/1e6, peak/1e6)
	if len(right) == 0 {
		fmt.Printf("  right sign-ins:                 none got in (%d refused)\n", refused)
		os.Exit(1)
	}
	slices.Sort(right)
	fmt.Printf("  right sign-ins:                 %d in, %d refused; median %v (min %v, max %v; aim: under 1 s)\n",
		len(right), refused, right[len(right)/2].Round(time.Millisecond), right[0].Round(time.Millisecond), right[len(right)-1].Round(time.Millisecond))
	fmt.Printf("  the same with no flood:         median %v of %d (the machine's own speed now)\n", alone[len(alone)/2].Round(time.Millisecond), len(alone))
}

// client sends from a loopback address of its own and never follows a
// redirect (a right sign-in answers 303).
func client(from string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	return &http.Client{
		Transport:     &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 32},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       30 * time.Second,
	}
}

func signIn(ctx context.Context, c *http.Client, addr, pw string) int {
	req, err := http.NewRequestWithContext(ctx, "POST", "http://"+addr+"/signin", strings.NewReader(url.Values{"password": {pw}}.Encode()))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func waitUp(addr string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("boxsnap serve did not answer within 2 minutes")
}

// memory reads a field of /proc/pid/status, in bytes.
func memory(pid int, field string) float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb * 1024
		}
	}
	return 0
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "signin:", err)
	os.Exit(1)
}
