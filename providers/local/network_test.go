package local

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// networkBackend is a backend whose boxes run inside bubblewrap with pasta,
// or the test is skipped where this host has neither.
func networkBackend(t *testing.T) *Backend {
	t.Helper()
	for _, tool := range []string{"bwrap", "pasta", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (make deps installs bubblewrap and passt)", tool)
		}
	}
	b, err := New(Config{Root: filepath.Join(passable(t), "local"), Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, b)
	return b
}

// runBox makes a box running command, waits for its process to end, and
// reads the files it wrote.
func runBox(t *testing.T, b *Backend, id string, spec providers.BoxSpec) func(name string) string {
	t.Helper()
	spec.Box = providers.BoxIdentity{ID: id, Kind: "linux"}
	g, err := b.Acquire(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Release(t.Context(), g) })
	if err := b.Start(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	p := b.procs[g.Ref]
	b.mu.Unlock()
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		t.Fatal("the box's process did not end")
	}
	if b.Bwrap == "" {
		t.Skip("bubblewrap cannot make a sandbox on this host")
	}
	dir := b.BoxDir(g)
	return func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			log, _ := os.ReadFile(b.Path(store.DirState, g.Ref+".log"))
			t.Fatalf("the box's process wrote no %s: %v\nits log: %s", name, err, log)
		}
		return strings.TrimSpace(string(data))
	}
}

// connectScript has the box try TCP to each address and write "reached"
// or "refused" in the file named after it.
func connectScript(targets map[string]string) string {
	var sb strings.Builder
	for file, hostPort := range targets {
		h, p, _ := net.SplitHostPort(hostPort)
		fmt.Fprintf(&sb, "if timeout 3 bash -c 'exec 3<>/dev/tcp/%s/%s' 2>/dev/null; then echo reached > %s; else echo refused > %s; fi\n", h, p, file, file)
	}
	return sb.String()
}

// TestBoxCannotReachLoopback: a box has its own network. No box process
// reaches the host's loopback, where boxsnap's web server and API, its
// PostgreSQL and any other service listen: not at 127.0.0.1 nor ::1, nor
// through the gateway's address, whether or not its template allows
// network. A box whose template allows network has an interface and a
// route through pasta, and reaches an outside address the host reaches; one
// whose template does not has only its own loopback.
func TestBoxCannotReachLoopback(t *testing.T) {
	b := networkBackend(t)
	// The host's loopback services: a TCP listener, and a web server as
	// boxsnap's own sign-in page is.
	var accepted atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	var signIns atomic.Int32
	web := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { signIns.Add(1) })}
	wln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = web.Serve(wln) }()
	defer web.Close()
	var accepted6 atomic.Int32
	ln6, err6 := net.Listen("tcp", "[::1]:0")
	if err6 == nil {
		defer ln6.Close()
		go func() {
			for {
				c, err := ln6.Accept()
				if err != nil {
					return
				}
				accepted6.Add(1)
				c.Close()
			}
		}()
	}
	port := ln.Addr().(*net.TCPAddr).Port
	gw := defaultGateway(t)
	targets := map[string]string{
		"loopback": ln.Addr().String(),
		"web":      wln.Addr().String(),
		"gateway":  net.JoinHostPort(gw, fmt.Sprint(port)),
	}
	if err6 == nil {
		targets["loopback6"] = ln6.Addr().String()
	}
	// An outside address the host reaches: its resolver's TCP port.
	outside := resolverAddr()
	hostReachesOutside := false
	if outside != "" {
		if c, err := net.DialTimeout("tcp", outside, 3*time.Second); err == nil {
			c.Close()
			hostReachesOutside = true
			targets["outside"] = outside
		}
	}
	script := connectScript(targets) + "cat /proc/net/route > route; tail -n +3 /proc/net/dev | cut -d: -f1 > ifaces; echo done > done\n"

	for _, c := range []struct {
		name      string
		noNetwork bool
	}{{"network allowed", false}, {"no network", true}} {
		t.Run(c.name, func(t *testing.T) {
			id := "bxnetallowed1"
			if c.noNetwork {
				id = "bxnetnone1"
			}
			read := runBox(t, b, id, providers.BoxSpec{Command: "bash -c " + shellQuote(script), NoNetwork: c.noNetwork})
			read("done")
			for _, f := range []string{"loopback", "web", "gateway", "loopback6"} {
				if _, ok := targets[f]; !ok {
					continue
				}
				if got := read(f); got != "refused" {
					t.Errorf("the box reached the host's %s (%s): %s", f, targets[f], got)
				}
			}
			route := read("route")
			ifaces := strings.Fields(read("ifaces"))
			if c.noNetwork {
				if len(ifaces) != 1 || ifaces[0] != "lo" || strings.Count(route, "\n") > 0 {
					t.Errorf("a box without network has interfaces %v and routes:\n%s", ifaces, route)
				}
				if hostReachesOutside && read("outside") != "refused" {
					t.Errorf("a box without network reached %s", outside)
				}
				return
			}
			if len(ifaces) < 2 || !strings.Contains(route, "00000000") {
				t.Errorf("a box with network has no interface or default route through pasta: interfaces %v, routes:\n%s", ifaces, route)
			}
			if hostReachesOutside {
				if got := read("outside"); got != "reached" {
					t.Errorf("a box with network did not reach the outside address %s: %s", outside, got)
				}
			} else {
				t.Log("the host reaches no outside address: only the interface and route are checked")
			}
		})
	}
	if n := accepted.Load() + accepted6.Load(); n != 0 {
		t.Errorf("the host's loopback listeners accepted %d connections from boxes", n)
	}
	// A box cannot send the owner's sign-in page a single request, so it
	// cannot drive the sign-in throttle of 127.0.0.1.
	if n := signIns.Load(); n != 0 {
		t.Errorf("the web server on the host's loopback answered %d requests from boxes", n)
	}
}

// TestBoxPublishesItsScreen: the port a box publishes (its screen's) is
// reached from the host's loopback, inbound only.
func TestBoxPublishesItsScreen(t *testing.T) {
	b := networkBackend(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: no web server to run in the box")
	}
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := pl.Addr().(*net.TCPAddr).Port
	pl.Close()
	g, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxnetscreen1", Kind: "linux"},
		Command: fmt.Sprintf("echo screen > index.html; exec python3 -m http.server --bind 127.0.0.1 %d", port), Publish: []int{port}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Release(t.Context(), g) })
	if err := b.Start(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Stop(t.Context(), g) }()
	url := fmt.Sprintf("http://127.0.0.1:%d/index.html", port)
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			body := make([]byte, 64)
			n, _ := resp.Body.Read(body)
			resp.Body.Close()
			if resp.StatusCode == 200 && strings.TrimSpace(string(body[:n])) == "screen" {
				return
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(b.Path(store.DirState, g.Ref+".log"))
			t.Fatalf("the box's published port %d was not reached from the host: %v\nits log: %s", port, err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestPublishIsChecked: a published port that is no TCP port is refused,
// and no box is made.
func TestPublishIsChecked(t *testing.T) {
	b, err := New(Config{Root: t.TempDir(), Install: "in-test", NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, b)
	for _, ports := range [][]int{{0}, {70000}, {-1}} {
		_, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxpublish1", Kind: "linux"}, Publish: ports})
		if err == nil || !strings.Contains(err.Error(), "is not a TCP port") {
			t.Errorf("publish %v: %v", ports, err)
		}
		if _, err := os.Stat(b.Store.BoxDir("bxpublish1")); err == nil {
			t.Fatalf("publish %v made the box's folder", ports)
		}
	}
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// defaultGateway is the host's IPv4 default gateway, the address pasta
// would map to the host's loopback without --no-map-gw.
func defaultGateway(t *testing.T) string {
	f, err := os.Open("/proc/net/route")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) >= 3 && fl[1] == "00000000" {
			var a [4]byte
			if _, err := fmt.Sscanf(fl[2], "%02X%02X%02X%02X", &a[3], &a[2], &a[1], &a[0]); err == nil {
				return net.IP(a[:]).String()
			}
		}
	}
	t.Skip("this host has no default route")
	return ""
}

// resolverAddr is the first name server of /etc/resolv.conf at TCP 53, or
// "" when it is on loopback or there is none.
func resolverAddr() string {
	data, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "nameserver" {
			if ip := net.ParseIP(f[1]); ip != nil && !ip.IsLoopback() {
				return net.JoinHostPort(f[1], "53")
			}
		}
	}
	return ""
}

// pastaOwnerEnv names, in a child test process, the data folder and box
// TestAKilledOwnerLeavesNoNetworkStack's owner starts before it is killed.
const pastaOwnerEnv = "BOXSNAP_TEST_PASTA_OWNER"

// TestOwnerDiesWithANetworkedBox is not a test of its own: it is the owner
// TestAKilledOwnerLeavesNoNetworkStack runs in a child process. It starts
// the box, with its network, and is killed with SIGKILL once it runs.
func TestOwnerDiesWithANetworkedBox(t *testing.T) {
	at := os.Getenv(pastaOwnerEnv)
	if at == "" {
		t.Skip("the owner TestAKilledOwnerLeavesNoNetworkStack runs and kills")
	}
	root, box, ok := strings.Cut(at, ":")
	if !ok {
		t.Fatalf("%s=%q: not root:box", pastaOwnerEnv, at)
	}
	b := ownerBackend(t, root, "dead")
	if err := b.Start(context.Background(), b.guestOf(box, "linux")); err != nil {
		t.Fatalf("the owner's start: %v", err)
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// TestAKilledOwnerLeavesNoNetworkStack: a boxsnap process killed while a box
// it started runs leaves no process of that box behind, its network stack
// (pasta) too. pasta holds the box's network namespace by descriptor, so
// nothing else ends it; before it ended with its owner, every owner killed
// with a networked box running (a worker killed mid-restore, a crash) left
// one pasta for good.
func TestAKilledOwnerLeavesNoNetworkStack(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the box's sandbox runs as its own user only under root")
	}
	seed := networkBackend(t)
	root := seed.Root()
	g, err := seed.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxpastaowner", Kind: "linux"}, Command: "sleep 86397"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = seed.Release(context.Background(), g) })
	owner := exec.Command(os.Args[0], "-test.run=^TestOwnerDiesWithANetworkedBox$", "-test.count=1", "-test.v")
	owner.Env = append(os.Environ(), pastaOwnerEnv+"="+root+":"+g.Ref)
	out, err := owner.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the owner was not killed with its box running (%v):\n%s", err, out)
	}
	// Every process the owner started for the box writes to the box's log:
	// pasta's output goes there too. None may be left.
	logPath := seed.Path(store.DirState, g.Ref+".log")
	var left []int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		left = writersOf(logPath)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
	}
	var names []string
	for _, pid := range left {
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		names = append(names, fmt.Sprintf("%d %s", pid, strings.TrimSpace(string(comm))))
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	t.Fatalf("processes the killed owner started for its box still run, 10 s after: %v", names)
}

// writersOf are the processes holding path open.
func writersOf(path string) []int {
	procs, _ := os.ReadDir("/proc")
	var out []int
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			if to, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && to == path {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// TestAForkOfABoxWithoutNetworkHasNone: a fork runs as its source ran, and
// a box its template keeps off the network stays off it in its forks: the
// fork's process sees only its own loopback.
func TestAForkOfABoxWithoutNetworkHasNone(t *testing.T) {
	b := networkBackend(t)
	script := "tail -n +3 /proc/net/dev | cut -d: -f1 > ifaces; echo done > done\n"
	read := runBox(t, b, "bxnonetsource", providers.BoxSpec{Command: "bash -c " + shellQuote(script), NoNetwork: true})
	read("done")
	src := providers.Guest{Ref: "bxnonetsource", Kind: "linux"}
	taken, err := b.Snapshot(t.Context(), src, providers.SnapshotTake{Label: providers.Label{Box: src.Ref}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fork, err := b.ForkSnapshot(t.Context(), providers.SnapshotRef{ID: taken.Ref, Ref: taken.Ref, Guest: src},
		providers.BoxIdentity{ID: "bxnonetfork", Kind: "linux"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Release(context.Background(), fork) })
	if err := os.Remove(filepath.Join(b.BoxDir(fork), "done")); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(t.Context(), fork); err != nil {
		t.Fatal(err)
	}
	done := filepath.Join(b.BoxDir(fork), "done")
	for deadline := time.Now().Add(time.Minute); ; {
		if _, err := os.Stat(done); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the fork's process wrote nothing within a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ifaces, _ := os.ReadFile(filepath.Join(b.BoxDir(fork), "ifaces")); strings.Join(strings.Fields(string(ifaces)), " ") != "lo" {
		t.Errorf("the fork of a box without network has interfaces %q, want its own loopback alone", ifaces)
	}
}
