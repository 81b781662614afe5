package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/boxsnap/boxsnap/providers/local/objstore"
)

const (
	startTimeout = 30 * time.Second
	stopTimeout  = 10 * time.Second
)

// Server is a running versitygw.
type Server struct {
	Dir       string // the folder it serves buckets from
	Endpoint  string // http://127.0.0.1:PORT, or https:// when it serves TLS
	AccessKey string
	// CAFile is the PEM certificate its TLS certificate is signed with
	// (StartTLS); "" for plain HTTP.
	CAFile    string
	SecretKey string
	// Log is the server's output, kept until Stop.
	Log  string
	cmd  *exec.Cmd
	done chan struct{}
}

// Binary finds versitygw: BOXSNAP_VERSITYGW, then .cache/bin/versitygw in
// the repository (where make test builds it), then the PATH.
func Binary() (string, error) {
	if b := os.Getenv("BOXSNAP_VERSITYGW"); b != "" {
		if _, err := os.Stat(b); err == nil {
			return b, nil
		}
	}
	if dir, err := os.Getwd(); err == nil {
		for ; dir != "/" && dir != "."; dir = filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				b := filepath.Join(dir, ".cache", "bin", "versitygw")
				if _, err := os.Stat(b); err == nil {
					return b, nil
				}
				break
			}
		}
	}
	if b, err := exec.LookPath("versitygw"); err == nil {
		return b, nil
	}
	return "", errors.New("versitygw is not built (make test builds it into .cache/bin; or scripts/need-versitygw.sh .cache/bin/versitygw)")
}

// Start starts a versitygw for the test, serving a new temporary folder,
// and stops it when the test ends. It skips the test where versitygw is not
// built, or fails it under CI.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartIn(t, t.TempDir())
}

// StartIn starts a versitygw for the test serving dir (a small file system
// mounted there makes a store with no room).
func StartIn(t testing.TB, dir string) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("a real S3 server is needed and is not there: %v", err)
		}
		t.Skipf("skipped: %v", err)
	}
	s, err := StartServer(bin, dir)
	if err != nil {
		t.Fatalf("start versitygw: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// StartServer starts the versitygw at bin serving dir, for a benchmark;
// Stop stops it.
func StartServer(bin, dir string) (*Server, error) {
	return startServer(bin, dir, nil)
}

// startServer starts the versitygw at bin serving dir, over TLS with
// tlsFiles' certificate where it is given.
func startServer(bin, dir string, tlsFiles *tlsFiles) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.CreateTemp("", "versitygw-*.log")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, Endpoint: "http://" + port, AccessKey: "bs" + randomHex(8), SecretKey: randomHex(20), Log: logf.Name(), done: make(chan struct{})}
	// Its metadata goes in sidecar files, so any file system serves (no
	// extended attributes needed).
	meta := filepath.Join(filepath.Dir(logf.Name()), filepath.Base(logf.Name())+".meta")
	if err := os.MkdirAll(meta, 0o700); err != nil {
		return nil, err
	}
	args := []string{"--port", port}
	if tlsFiles != nil {
		args = append(args, "--cert", tlsFiles.cert, "--key", tlsFiles.key)
		s.Endpoint, s.CAFile = "https://"+port, tlsFiles.ca
	}
	cmd := exec.Command(bin, append(args, "posix", "--sidecar", meta, dir)...)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+s.AccessKey, "ROOT_SECRET_ACCESS_KEY="+s.SecretKey)
	cmd.Stdout, cmd.Stderr = logf, logf
	// The server dies with the test binary, even one killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s.cmd = cmd
	go func() {
		_ = cmd.Wait()
		_ = logf.Close()
		_ = os.RemoveAll(meta)
		close(s.done)
	}()
	deadline := time.Now().Add(startTimeout)
	for {
		c, err := net.DialTimeout("tcp", port, time.Second)
		if err == nil {
			_ = c.Close()
			return s, nil
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(logf.Name())
			_ = os.Remove(logf.Name())
			return nil, fmt.Errorf("versitygw exited: %s", lastLines(string(log), 5))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("versitygw did not answer on %s in %v", port, startTimeout)
		}
	}
}

// Pid is the server's process ID (0 when it is not running), so a
// benchmark can read the CPU time it spent serving.
func (s *Server) Pid() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Stop stops the server (SIGTERM, then SIGKILL).
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	_ = os.Remove(s.Log)
}

// Config is the content store's settings for bucket and prefix on this
// server, with its keys.
func (s *Server) Config(bucket, prefix string) objstore.Config {
	return objstore.Config{Bucket: bucket, Prefix: prefix, Endpoint: s.Endpoint, Region: "us-east-1", AccessKey: s.AccessKey, SecretKey: s.SecretKey, CAFile: s.CAFile}
}

// Bucket makes a bucket of a fresh name on the server and answers its
// settings.
func (s *Server) Bucket(t testing.TB) objstore.Config {
	t.Helper()
	name := "bs-" + randomHex(6)
	if err := s.MakeBucket(context.Background(), name); err != nil {
		t.Fatalf("make bucket %s: %v", name, err)
	}
	return s.Config(name, "")
}

func (s *Server) client() (*minio.Client, error) {
	opts := &minio.Options{
		Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Region: "us-east-1", BucketLookup: minio.BucketLookupPath,
	}
	if s.CAFile != "" {
		tr, err := caTransport(s.CAFile)
		if err != nil {
			return nil, err
		}
		opts.Secure, opts.Transport = true, tr
	}
	return minio.New(strings.TrimPrefix(strings.TrimPrefix(s.Endpoint, "http://"), "https://"), opts)
}

// MakeBucket makes a bucket on the server.
func (s *Server) MakeBucket(ctx context.Context, name string) error {
	c, err := s.client()
	if err != nil {
		return err
	}
	return c.MakeBucket(ctx, name, minio.MakeBucketOptions{Region: "us-east-1"})
}

// List lists every key in the bucket, for a test to compare with what
// boxsnap recorded (boxsnap itself never lists a bucket).
func (s *Server) List(ctx context.Context, bucket string) ([]string, error) {
	c, err := s.client()
	if err != nil {
		return nil, err
	}
	var keys []string
	for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			return nil, o.Err
		}
		keys = append(keys, o.Key)
	}
	return keys, nil
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr, nil
}

func randomHex(n int) string {
	p := make([]byte, n)
	_, _ = rand.Read(p)
	return hex.EncodeToString(p)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
