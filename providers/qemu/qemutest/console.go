package qemutest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"time"
)

// ReadyLine starts the line the guest writes on its console once its init
// is done: "boxsnap-ready <boot ID>".
const ReadyLine = "boxsnap-ready "

// Boots lists the boot IDs of the ready lines in a guest's console log, in
// order: one per boot.
func Boots(consoleLog string) []string {
	b, err := os.ReadFile(consoleLog)
	if err != nil {
		return nil
	}
	var ids []string
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.Index(line, ReadyLine); i >= 0 {
			ids = append(ids, strings.TrimSpace(line[i+len(ReadyLine):]))
		}
	}
	return ids
}

// WaitBoot waits until the console log holds more than after ready lines
// and answers the newest boot ID.
func WaitBoot(ctx context.Context, consoleLog string, after int) (string, error) {
	for {
		if ids := Boots(consoleLog); len(ids) > after {
			return ids[len(ids)-1], nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("the guest wrote no ready line past %d on %s: %w", after, consoleLog, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Shell runs a shell command in the guest over its second serial port (the
// unix socket socket) and answers its output and exit status. A command
// that gets no answer in a few seconds (the guest still booting) is sent
// again on a new connection until ctx ends, so commands must be safe to
// run twice.
func Shell(ctx context.Context, socket, cmd string) (string, int, error) {
	var last error
	for {
		out, code, err := shellOnce(ctx, socket, cmd)
		if err == nil {
			return out, code, nil
		}
		last = err
		select {
		case <-ctx.Done():
			return "", -1, fmt.Errorf("run %q in the guest: %v (%w)", cmd, last, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func shellOnce(ctx context.Context, socket, cmd string) (string, int, error) {
	var n [8]byte
	_, _ = rand.Read(n[:])
	nonce := hex.EncodeToString(n[:])
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return "", -1, err
	}
	defer func() { _ = c.Close() }()
	deadline := time.Now().Add(5 * time.Second)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = c.SetDeadline(deadline)
	r := bufio.NewReader(c)
	// A probe first, sent again until the guest's shell answers
	// it: bytes sent while the guest boots are lost or cut, and a command
	// must reach the shell whole. The probe's marker is expanded by the
	// guest's shell, so an echo of what was sent never matches it.
	ready := regexp.MustCompile(`BSREADY` + nonce + `-\d`)
	// The guest's UART sends what the shell wrote only once it receives
	// again (its transmit interrupt is lost under TCG), so an empty line
	// goes every quarter second until the answer is in, and the probe
	// again every two seconds until the shell has answered it.
	stop := make(chan struct{})
	kicked := make(chan struct{})
	var probing atomic.Bool
	probing.Store(true)
	// No quotes and no brackets: a probe cut short must never leave the
	// shell waiting for their other half.
	probe := fmt.Sprintf("\necho BSREADY%s-$PPID\n", nonce)
	go func() {
		defer close(kicked)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			msg := "\n"
			if i%8 == 0 && probing.Load() {
				msg = probe
			}
			if _, err := io.WriteString(c, msg); err != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	defer func() { close(stop); <-kicked }()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return "", -1, err
		}
		if ready.MatchString(line) {
			break
		}
	}
	probing.Store(false)
	if _, err := fmt.Fprintf(c, "\n%s\necho BSEND%s $?\n", cmd, nonce); err != nil {
		return "", -1, err
	}
	end := regexp.MustCompile(`BSEND` + nonce + ` (\d+)`)
	var out strings.Builder
	for {
		line, err := r.ReadString('\n')
		if m := end.FindStringSubmatchIndex(line); m != nil {
			// Output with no newline of its own ends on the marker's line.
			out.WriteString(line[:m[0]])
			code := 0
			_, _ = fmt.Sscanf(line[m[2]:m[3]], "%d", &code)
			return strings.TrimRight(out.String(), "\n"), code, nil
		}
		if !strings.Contains(line, "BSREADY"+nonce) {
			out.WriteString(strings.TrimRight(line, "\r\n") + "\n")
		}
		if err != nil {
			return "", -1, err
		}
	}
}
