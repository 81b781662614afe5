package boot_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/boxsnap/boxsnap/app/boot"
	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

func TestMain(m *testing.M) {
	if cmd := os.Getenv(productProcess); cmd != "" {
		os.Exit(runProduct(cmd))
	}
	// A test that asks for a private libvirtd starts it; it stops after
	// every test, with the database's cluster.
	os.Exit(qemutest.Main(runFunc(func() int { return dbtest.Main(m) })))
}

// runFunc runs a test binary's tests for qemutest.Main.
type runFunc func() int

func (f runFunc) Run() int { return f() }

// syncBuffer is a buffer the server writes from its goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type server struct {
	url    string
	client *river.Client[pgx.Tx]
	stdout *syncBuffer
	cancel context.CancelFunc
	done   chan error
	http   *http.Client
}

func testConfig(t *testing.T, env map[string]string) config.Config {
	t.Helper()
	if env == nil {
		env = map[string]string{}
	}
	if _, ok := env["DATABASE_URL"]; !ok {
		env["DATABASE_URL"] = dbtest.NewDSN(t)
	}
	env["BOXSNAP_DATA_DIR"] = t.TempDir()
	env["BOXSNAP_ADDR"] = "127.0.0.1:0"
	cfg, _, err := config.Load("serve", nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// A local box is a file system of its own (a loop mount, as root):
	// unmounted before the data folder is removed.
	t.Cleanup(func() { _ = local.UnmountAll(cfg.DataDir); _ = local.UnmountAll(cfg.LocalRoot) })
	return cfg
}

// start runs boxsnap serve in-process until the test ends.
func start(t *testing.T, cfg config.Config, opts boot.Options) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{stdout: &syncBuffer{}, cancel: cancel, done: make(chan error, 1)}
	ready := make(chan struct{})
	userReady := opts.Ready
	opts.Ready = func(u string, c *river.Client[pgx.Tx]) {
		s.url, s.client = u, c
		if userReady != nil {
			userReady(u, c)
		}
		close(ready)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() { s.done <- boot.Serve(ctx, cfg, logger, s.stdout, opts) }()
	select {
	case <-ready:
	case err := <-s.done:
		t.Fatalf("serve stopped at start: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not start within a minute")
	}
	t.Cleanup(func() {
		cancel()
		<-s.done
	})
	jar, _ := cookiejar.New(nil)
	s.http = &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return s
}

func (s *server) do(t *testing.T, method, path string, form url.Values, header map[string]string) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, s.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const password = "correct horse battery"

func TestMigrationsUpFromEmpty(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dbtest.NewDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	// Empty the database the template gave, down to no table at all.
	if _, err := pool.Exec(ctx, "DROP SCHEMA public CASCADE; CREATE SCHEMA public"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Status(ctx, pool); err == nil {
		// River's validate reports pending migrations without error; the
		// app's status needs its table, which goose makes.
		t.Log("status on an empty database answered")
	}
	for i := 0; i < 2; i++ { // twice: the second run applies nothing
		if err := store.Migrate(ctx, pool, nil); err != nil {
			t.Fatalf("migrate run %d: %v", i+1, err)
		}
	}
	st, err := store.Status(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if st.AppPending != 0 || st.RiverPending != 0 || st.AppApplied < 2 {
		t.Fatalf("after migrating: %+v", st)
	}
	for _, table := range []string{"river_job", "owner", "sessions", "snapshots", "operations", "box_log", "pictures", "settings"} {
		var ok bool
		if err := pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", table).Scan(&ok); err != nil || !ok {
			t.Errorf("table %s missing after migrations (%v)", table, err)
		}
	}
}

func TestSignInWrongPasswordSignOut(t *testing.T) {
	t.Parallel()
	s := start(t, testConfig(t, map[string]string{"BOXSNAP_PASSWORD": password}), boot.Options{})
	if !strings.Contains(s.stdout.String(), "boxsnap is running at "+s.url) {
		t.Fatalf("serve printed %q", s.stdout.String())
	}

	resp, _ := s.do(t, "GET", "/", nil, nil)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/signin") {
		t.Fatalf("signed out GET / = %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body := s.do(t, "POST", "/signin", url.Values{"password": {"not the password"}}, nil)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "That password is not right.") {
		t.Fatalf("wrong password: %d %q", resp.StatusCode, body)
	}
	for _, c := range resp.Cookies() {
		if c.Name == "boxsnap_session" && c.Value != "" {
			t.Fatal("a wrong password set a session cookie")
		}
	}
	resp, _ = s.do(t, "POST", "/signin", url.Values{"password": {password}, "next": {"/settings/tokens"}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/settings/tokens" {
		t.Fatalf("sign in: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "boxsnap_session" {
			session = c
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Secure {
		t.Fatalf("session cookie %+v (over plain HTTP it is not Secure)", session)
	}
	if resp, _ := s.do(t, "GET", "/", nil, nil); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/boxes/snapshots" {
		t.Fatalf("signed in GET / = %d to %q, want the Snapshots tab", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ := s.do(t, "GET", "/boxes/snapshots", nil, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("signed in GET /boxes/snapshots = %d", resp.StatusCode)
	}
	if resp, _ := s.do(t, "GET", "/jobs/", nil, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("signed in GET /jobs/ = %d", resp.StatusCode)
	}
	// A personal API token, shown once, stored hashed.
	// Post, then redirect to the page that shows it once.
	resp, _ = s.do(t, "POST", "/settings/tokens", url.Values{"name": {"laptop"}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("make token: %d", resp.StatusCode)
	}
	resp, body = s.do(t, "GET", resp.Header.Get("Location"), nil, nil)
	token := regexp.MustCompile(`bxt_[a-z2-7]+`).FindString(body)
	if resp.StatusCode != http.StatusOK || token == "" {
		t.Fatalf("the made token's page: %d", resp.StatusCode)
	}
	if _, body := s.do(t, "GET", "/settings/tokens", nil, nil); strings.Contains(body, token) {
		t.Fatal("the token is shown a second time")
	}

	if resp, _ := s.do(t, "POST", "/signout", url.Values{}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out = %d", resp.StatusCode)
	}
	if resp, _ := s.do(t, "GET", "/", nil, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("after sign-out GET / = %d", resp.StatusCode)
	}
	// The old cookie is dead on the server, not only in the browser.
	req, _ := http.NewRequest("GET", s.url+"/", nil)
	req.AddCookie(session)
	old, err := (&http.Client{CheckRedirect: s.http.CheckRedirect}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	old.Body.Close()
	if old.StatusCode != http.StatusSeeOther {
		t.Fatalf("the signed-out session still works: %d", old.StatusCode)
	}
}

func TestCrossSiteRequestRefused(t *testing.T) {
	t.Parallel()
	s := start(t, testConfig(t, map[string]string{"BOXSNAP_PASSWORD": password}), boot.Options{})
	for name, h := range map[string]map[string]string{
		"fetch metadata": {"Sec-Fetch-Site": "cross-site"},
		"origin":         {"Origin": "https://evil.example"},
	} {
		resp, body := s.do(t, "POST", "/signin", url.Values{"password": {password}}, h)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "another site") {
			t.Errorf("%s: cross-site POST /signin = %d %q", name, resp.StatusCode, body)
		}
		for _, c := range resp.Cookies() {
			if c.Name == "boxsnap_session" {
				t.Errorf("%s: a cross-site sign-in set a session", name)
			}
		}
	}
	// The same request from the site itself passes.
	if resp, _ := s.do(t, "POST", "/signin", url.Values{"password": {password}}, map[string]string{"Sec-Fetch-Site": "same-origin"}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("same-origin sign-in = %d", resp.StatusCode)
	}
}

func TestJobsRefusedSignedOut(t *testing.T) {
	t.Parallel()
	s := start(t, testConfig(t, map[string]string{"BOXSNAP_PASSWORD": password}), boot.Options{})
	resp, _ := s.do(t, "GET", "/jobs/", nil, nil)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/signin") {
		t.Fatalf("GET /jobs/ signed out = %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = s.do(t, "GET", "/jobs/api/jobs?state=available", nil, nil)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /jobs/api/jobs signed out = %d", resp.StatusCode)
	}
}

func TestOneTimeLinkWorksOnce(t *testing.T) {
	t.Parallel()
	s := start(t, testConfig(t, nil), boot.Options{})
	m := regexp.MustCompile(`/setup/(bxl_[a-z2-7]+)`).FindStringSubmatch(s.stdout.String())
	if m == nil {
		t.Fatalf("serve printed no set-up link: %q", s.stdout.String())
	}
	link := m[0]
	if resp, _ := s.do(t, "POST", "/signin", url.Values{"password": {password}}, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("sign-in before a password is set = %d", resp.StatusCode)
	}
	if resp, _ := s.do(t, "GET", link, nil, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET link = %d", resp.StatusCode)
	}
	resp, body := s.do(t, "POST", link, url.Values{"password": {password}, "confirm": {"something else"}}, nil)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "not the same") {
		t.Fatalf("mismatched confirm = %d", resp.StatusCode)
	}
	resp, _ = s.do(t, "POST", link, url.Values{"password": {"short"}, "confirm": {"short"}}, nil)
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("short password = %d", resp.StatusCode)
	}
	resp, _ = s.do(t, "POST", link, url.Values{"password": {password}, "confirm": {password}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("set password = %d", resp.StatusCode)
	}
	if resp, _ := s.do(t, "GET", "/", nil, nil); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/boxes/snapshots" {
		t.Fatalf("signed in after the link: GET / = %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	// Twice: the link is used up, with words, and changes nothing.
	other := &server{url: s.url, http: &http.Client{CheckRedirect: s.http.CheckRedirect}}
	resp, body = other.do(t, "POST", link, url.Values{"password": {"another password!"}, "confirm": {"another password!"}}, nil)
	if resp.StatusCode != http.StatusGone || !strings.Contains(body, "used or has expired") {
		t.Fatalf("second use = %d %q", resp.StatusCode, body)
	}
	if resp, _ := other.do(t, "POST", "/signin", url.Values{"password": {"another password!"}}, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatal("the second use changed the password")
	}
	if resp, _ := other.do(t, "POST", "/signin", url.Values{"password": {password}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatal("the first password no longer signs in")
	}
}

// blockArgs is a job that runs until the test lets it go.
type blockArgs struct{}

func (blockArgs) Kind() string { return "test_block" }

type blockWorker struct {
	river.WorkerDefaults[blockArgs]
	started chan struct{}
	release chan struct{}
}

func (w *blockWorker) Work(ctx context.Context, _ *river.Job[blockArgs]) error {
	close(w.started)
	select {
	case <-w.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func TestGracefulShutdownWithRunningJob(t *testing.T) {
	t.Parallel()
	w := &blockWorker{started: make(chan struct{}), release: make(chan struct{})}
	cfg := testConfig(t, map[string]string{"BOXSNAP_PASSWORD": password})
	s := start(t, cfg, boot.Options{ExtraWorkers: func(ws *river.Workers) { river.AddWorker(ws, w) }})
	res, err := s.client.Insert(context.Background(), blockArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-w.started

	s.cancel() // as SIGTERM does
	// It stops taking HTTP requests...
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(s.url + "/healthz")
		if err != nil {
			break
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("still serving HTTP 20 s after the signal")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// ...but waits for the running job.
	select {
	case err := <-s.done:
		t.Fatalf("serve returned (%v) while a job was running", err)
	default:
	}
	close(w.release)
	if err := <-s.done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	s.done <- nil // for the cleanup
	pool, err := pgxpool.New(context.Background(), cfg.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var state string
	if err := pool.QueryRow(context.Background(), "SELECT state FROM river_job WHERE id = $1", res.Job.ID).Scan(&state); err != nil {
		t.Fatal(err)
	}
	if state != "completed" {
		t.Fatalf("the running job ended %s, want completed", state)
	}
}

func TestFaultsNamedWithFix(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	run := func(cfg config.Config) error {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		return boot.Serve(ctx, cfg, logger, io.Discard, boot.Options{Ready: func(string, *river.Client[pgx.Tx]) { cancel() }})
	}

	t.Run("database does not answer", func(t *testing.T) {
		t.Parallel()
		cfg := testConfig(t, map[string]string{"DATABASE_URL": "postgres://bob:s3cretpw@127.0.0.1:1/boxsnap?connect_timeout=2", "BOXSNAP_DATABASE_WAIT": "1s"})
		err := run(cfg)
		var p *boot.Problem
		if !errors.As(err, &p) || !strings.Contains(err.Error(), "does not answer") || !strings.Contains(err.Error(), "unset DATABASE_URL") {
			t.Fatalf("got %v", err)
		}
		if strings.Contains(err.Error(), "s3cretpw") {
			t.Fatal("the error shows the database password")
		}
	})
	t.Run("port in use", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		cfg := testConfig(t, nil)
		cfg.Addr = ln.Addr().String()
		if err := run(cfg); err == nil || !strings.Contains(err.Error(), "is in use") || !strings.Contains(err.Error(), "--addr") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("data folder cannot be written", func(t *testing.T) {
		t.Parallel()
		cfg := testConfig(t, map[string]string{"DATABASE_URL": ""})
		file := filepath.Join(t.TempDir(), "a-file")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg.DataDir = filepath.Join(file, "data")
		err := run(cfg)
		if err == nil || !strings.Contains(err.Error(), "cannot be made") || !strings.Contains(err.Error(), "--data-dir") {
			t.Fatalf("got %v", err)
		}
		if _, serr := os.Stat(cfg.DataDir); serr == nil {
			t.Fatal("something was made")
		}
	})
	t.Run("second serve on the same data folder", func(t *testing.T) {
		t.Parallel()
		cfg := testConfig(t, map[string]string{"DATABASE_URL": ""})
		first := start(t, cfg, boot.Options{})
		_ = first
		second := cfg
		second.Addr = "127.0.0.1:0"
		err := run(second)
		if err == nil || !strings.Contains(err.Error(), "in use by another boxsnap") {
			t.Fatalf("got %v", err)
		}
	})
}

// TestDoctorSaysHowALocalBoxsDiskIsBounded: the doctor says how a new
// local box's disk is bounded: by default to the byte by a file system of
// its own, or, where that cannot be made here, by the watch, why and the
// fix; with BOXSNAP_LOCAL_DISK_IMAGES=false by the watch.
func TestDoctorSaysHowALocalBoxsDiskIsBounded(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	doctor := func(images bool) string {
		cfg := testConfig(t, nil)
		cfg.LocalDiskImages = images
		var out strings.Builder
		boot.Doctor(context.Background(), cfg, logger, &out)
		return out.String()
	}
	if out, want := doctor(false), "ok    local box disks"; !strings.Contains(out, want) || !strings.Contains(out, "bounded by a watch that measures its folder, not to the byte, because BOXSNAP_LOCAL_DISK_IMAGES=false") {
		t.Fatalf("with disk images off the doctor does not say the watch bounds a box's disk:\n%s", out)
	}
	why, fix := local.ProbeLoop(t.TempDir())
	want := []string{"ok    local box disks", "a new box's disk is bounded to the byte by a file system of its own (a loop-mounted ext4 image; a 16 GiB one takes about 170 MiB on the host at once"}
	if why != "" {
		want = []string{"FAIL  local box disks", "a new box's disk is bounded by a watch that measures its folder, not to the byte, because " + why, "fix: " + fix}
	}
	if !testConfig(t, nil).LocalDiskImages {
		t.Fatal("disk images are not on by default")
	}
	out := doctor(true)
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Fatalf("by default the doctor does not say %q:\n%s", w, out)
		}
	}
}

// TestDoctorSaysWhetherLocalForksShareTheirFiles: the doctor says whether
// forks of a local snapshot share one copy of its files, or why each
// copies them and the fix; with BOXSNAP_LOCAL_DISK_IMAGES=false they copy.
func TestDoctorSaysWhetherLocalForksShareTheirFiles(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	doctor := func(images bool) string {
		cfg := testConfig(t, nil)
		cfg.LocalDiskImages = images
		var out strings.Builder
		boot.Doctor(context.Background(), cfg, logger, &out)
		return out.String()
	}
	if out := doctor(false); !strings.Contains(out, "ok    local forks") || !strings.Contains(out, "each fork copies its snapshot's files, because BOXSNAP_LOCAL_DISK_IMAGES=false") {
		t.Fatalf("with disk images off the doctor does not say forks copy:\n%s", out)
	}
	why, fix := local.ProbeShare(t.TempDir())
	want := []string{"ok    local forks", "forks of one snapshot share one read-only copy of its files"}
	if why != "" {
		want = []string{"FAIL  local forks", "each fork copies its snapshot's files, because " + why, "fix: " + fix}
	}
	out := doctor(true)
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Fatalf("the doctor does not say %q:\n%s", w, out)
		}
	}
}

// TestDoctorReadsTheDatabase: the doctor says which PostgreSQL answers and
// that the migrations are applied, through its typed queries.
func TestDoctorReadsTheDatabase(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, nil)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	var out strings.Builder
	boot.Doctor(context.Background(), cfg, logger, &out)
	if !regexp.MustCompile(`answers \(PostgreSQL \d+`).MatchString(out.String()) {
		t.Fatalf("the doctor does not name the database's version:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "applied, none pending") {
		t.Fatalf("the doctor does not say the migrations are applied:\n%s", out.String())
	}
}
