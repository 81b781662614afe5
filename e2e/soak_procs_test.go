package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// soakProc is one boxsnap process the soak runs from its binary, as the
// README's Procfile does: a web process or a worker.
type soakProc struct {
	name string
	args []string
	env  []string
	log  *os.File

	mu  sync.Mutex
	cmd *exec.Cmd
	// ended closes once cmd has ended and is reaped.
	ended     chan struct{}
	startedAt time.Time
	// rssStart is its RSS a settle time after its latest start.
	rssStart int64
}

func (p *soakProc) start(bin string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	cmd := exec.Command(bin, p.args...)
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = p.log, p.log
	// Its own process group, so a kill reaches only it (its box
	// processes are its children and go the way its code sends them).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	fmt.Fprintf(p.log, "\n==== soak: %s starts at %s\n", p.name, time.Now().Format(time.RFC3339Nano))
	if err := cmd.Start(); err != nil {
		return err
	}
	ended := make(chan struct{})
	p.cmd, p.ended, p.startedAt, p.rssStart = cmd, ended, time.Now(), 0
	go func() { _ = cmd.Wait(); close(ended) }()
	return nil
}

func (p *soakProc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// latest is its latest process's ID (0 before its first start) and a
// channel closed once that process has ended.
func (p *soakProc) latest() (int, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0, nil
	}
	return p.cmd.Process.Pid, p.ended
}

// kill ends it with SIGKILL, as a crash would, and waits up to 10 s for
// its end.
func (p *soakProc) kill() {
	if pid, ended := p.latest(); pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		endedWithin(ended, 10*time.Second)
	}
}

// stop ends it with SIGTERM, then SIGKILL after a while; and anything left
// in its process group.
func (p *soakProc) stop() {
	pid, ended := p.latest()
	if pid <= 0 {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	if !endedWithin(ended, 15*time.Second) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		endedWithin(ended, 5*time.Second)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}

// endedWithin waits up to d for ended to close: false when it has not.
func endedWithin(ended <-chan struct{}, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ended:
		return true
	case <-timer.C:
		return false
	}
}

// rss is a process's resident set from /proc, in bytes (0 when gone).
func rss(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// soakHTTP is a client of the API with one bearer token, or of the pages
// with a cookie jar.
type soakHTTP struct {
	base  string
	token string
	c     *http.Client
}

func newSoakHTTP(base, token string) *soakHTTP {
	jar, _ := cookiejar.New(nil)
	return &soakHTTP{base: base, token: token, c: &http.Client{Jar: jar, Timeout: 90 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// apiError is an answer that was not 2xx.
type apiError struct {
	Status   int
	Body     string
	TryAgain bool
}

func (e *apiError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Status, e.Body) }

// do sends a JSON body (or none) and decodes a JSON answer into out.
func (h *soakHTTP) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	resp, err := h.c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			TryAgain bool `json:"try_again"`
		}
		_ = json.Unmarshal(b, &e)
		return &apiError{Status: resp.StatusCode, Body: strings.TrimSpace(string(b)), TryAgain: e.TryAgain}
	}
	if out != nil {
		if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, "json") {
			if p, ok := out.(*[]byte); ok {
				*p = b
				return nil
			}
		}
		if p, ok := out.(*[]byte); ok {
			*p = b
			return nil
		}
		return json.Unmarshal(b, out)
	}
	return nil
}

// form posts a form as the pages do and answers its status and body.
func (h *soakHTTP) form(ctx context.Context, path string, v url.Values) (int, string, error) {
	resp, body, err := h.send(ctx, "POST", path, v)
	if err != nil {
		return 0, "", err
	}
	return resp.StatusCode, body, nil
}

// formTo posts a form that answers 303 and returns where it leads.
func (h *soakHTTP) formTo(ctx context.Context, path string, v url.Values) (string, error) {
	resp, body, err := h.send(ctx, "POST", path, v)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusSeeOther {
		return "", fmt.Errorf("%s answered %d: %.300s", path, resp.StatusCode, body)
	}
	return resp.Header.Get("Location"), nil
}

// page gets a page and answers its status and body.
func (h *soakHTTP) page(ctx context.Context, path string) (int, string, error) {
	resp, body, err := h.send(ctx, "GET", path, nil)
	if err != nil {
		return 0, "", err
	}
	return resp.StatusCode, body, nil
}

// send makes one request of the pages, a form's values as its body when v
// is not nil, and reads the answer whole.
func (h *soakHTTP) send(ctx context.Context, method, path string, v url.Values) (*http.Response, string, error) {
	var rd io.Reader
	if v != nil {
		rd = strings.NewReader(v.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, h.base+path, rd)
	if err != nil {
		return nil, "", err
	}
	if v != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := h.c.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b), nil
}

var personalToken = regexp.MustCompile(`bxt_[A-Za-z0-9_-]+`)

// personToken signs in on the pages with the owner's password and makes a
// personal API token on the API tokens page, as the README says a person
// does for the CLI.
func personToken(ctx context.Context, base, password string) (string, error) {
	h := newSoakHTTP(base, "")
	code, body, err := h.form(ctx, "/signin", url.Values{"password": {password}})
	if err != nil {
		return "", err
	}
	if code != http.StatusSeeOther {
		return "", fmt.Errorf("sign-in answered %d: %.300s", code, body)
	}
	// The token's post redirects to the page that shows it once.
	where, err := h.formTo(ctx, "/settings/tokens", url.Values{"name": {"soak"}})
	if err != nil {
		return "", err
	}
	code, body, err = h.page(ctx, where)
	if err != nil {
		return "", err
	}
	tok := personalToken.FindString(body)
	if code != http.StatusOK || tok == "" {
		return "", fmt.Errorf("the API tokens page answered %d with no token: %.300s", code, body)
	}
	return tok, nil
}

// waitHealthy waits for /healthz to answer 200, the readiness a client
// sees. A server not yet listening refuses a connection rather than
// holding it, so it is asked again every 100 ms.
func waitHealthy(base string, d time.Duration) error {
	deadline := time.Now().Add(d)
	var last string
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s/healthz did not answer 200 within %s (last: %s)", base, d, last)
}

// boxProcesses counts, per box folder, the processes of the template's
// command (cmdline exactly want) whose working folder is that folder (by
// device and inode, which holds inside bubblewrap's mount namespace too).
func boxProcesses(folders map[string]string, want string) map[string][]int {
	type key struct{ dev, ino uint64 }
	byKey := map[key]string{}
	for id, dir := range folders {
		var st syscall.Stat_t
		if syscall.Stat(dir, &st) == nil {
			byKey[key{st.Dev, st.Ino}] = id
		}
	}
	out := map[string][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cl, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || strings.TrimRight(strings.ReplaceAll(string(cl), "\x00", " "), " ") != want {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join("/proc", e.Name(), "cwd"), &st) != nil {
			continue
		}
		if id, ok := byKey[key{st.Dev, st.Ino}]; ok {
			out[id] = append(out[id], pid)
		}
	}
	return out
}

// soakLog collects what broke, with IDs, for one report at the end.
type soakLog struct {
	mu   sync.Mutex
	t    *testing.T
	bad  map[string][]string
	note []string
}

func (l *soakLog) failf(check, format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.bad == nil {
		l.bad = map[string][]string{}
	}
	l.bad[check] = append(l.bad[check], fmt.Sprintf(format, a...))
}

func (l *soakLog) notef(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := fmt.Sprintf(format, a...)
	l.note = append(l.note, s)
	l.t.Logf("soak: %s", s)
}

// report fails t.Run(check) with everything failf recorded under check.
func (l *soakLog) report(t *testing.T, check string) {
	t.Run(check, func(t *testing.T) {
		l.mu.Lock()
		defer l.mu.Unlock()
		got := l.bad[check]
		const show = 60
		for i, s := range got {
			if i == show {
				t.Errorf("… and %d more", len(got)-show)
				break
			}
			t.Error(s)
		}
	})
}
