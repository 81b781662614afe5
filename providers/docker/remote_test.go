package docker_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/docker/dockertest"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

// TestDockerRemoteTLS: the backend reaches an engine over tcp:// with TLS
// (docker's --tlsverify: the engine checks boxsnap's client certificate,
// boxsnap the engine's), takes and restores a box there; without a client
// certificate the engine refuses it, and the doctor says what to check.
func TestDockerRemoteTLS(t *testing.T) {
	t.Parallel()
	dockertest.Host(t) // skips, or fails under CI, where dockerd cannot run
	dir, err := os.MkdirTemp("", "bsdkr-")
	must(t, err)
	pki := t.TempDir()
	writePKI(t, pki)
	port := freePort(t)
	d, err := dockertest.StartWith(dir, "--tlsverify", "--tlscacert", filepath.Join(pki, "ca.pem"), "--tlscert", filepath.Join(pki, "server.pem"),
		"--tlskey", filepath.Join(pki, "server-key.pem"), "--host", fmt.Sprintf("tcp://127.0.0.1:%d", port))
	must(t, err)
	t.Cleanup(d.Stop)
	ctx := context.Background()
	must(t, dockertest.Import(ctx, d.Host, dockertest.TestImage, nil))

	host := fmt.Sprintf("tcp://127.0.0.1:%d", port)
	b, err := docker.New(docker.Config{ID: "far", Host: host, Install: install, Network: "none", CopierBinary: dockertest.Busybox,
		TLSCACert: filepath.Join(pki, "ca.pem"), TLSCert: filepath.Join(pki, "client.pem"), TLSKey: filepath.Join(pki, "client-key.pem")})
	must(t, err)
	t.Cleanup(func() { _ = b.Close() })
	if c := b.Doctor(ctx); !c[0].OK || !strings.Contains(c[0].Detail, host) {
		t.Fatalf("the doctor over TLS: %+v", c)
	}
	box := providertest.NewID("bx")
	g, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: box, Kind: docker.KindLinux, Install: install}, Template: dockertest.TestImage})
	must(t, err)
	if g.Host != "127.0.0.1:"+fmt.Sprint(port) {
		t.Errorf("a remote box's host is %q", g.Host)
	}
	writeState(t, b, g, "over TLS")
	ref := take(t, b, g, box)
	writeState(t, b, g, "later")
	plan, err := b.PlanSnapshots(ctx, g, &ref)
	must(t, err)
	if plan.Storage.FreeBytes <= 0 {
		t.Errorf("the remote data root's room is not read: %+v", plan.Storage)
	}
	restore(t, b, g, box, ref)
	if got := readState(t, b, g); got != "over TLS" {
		t.Fatalf("after a restore over TLS the box holds %q", got)
	}

	// A client certificate another CA signed: the engine refuses it.
	rogue := t.TempDir()
	writePKI(t, rogue)
	noCert, err := docker.New(docker.Config{ID: "far", Host: host, Install: install,
		TLSCACert: filepath.Join(pki, "ca.pem"), TLSCert: filepath.Join(rogue, "client.pem"), TLSKey: filepath.Join(rogue, "client-key.pem")})
	must(t, err)
	if c := noCert.Doctor(ctx); c[0].OK || !strings.Contains(c[0].Fix, "--tlsverify") {
		t.Fatalf("the doctor with a certificate the engine refuses: %+v", c)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// writePKI writes a CA, and a server certificate for 127.0.0.1 and a client
// certificate signed by it.
func writePKI(t *testing.T, dir string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "boxsnap test CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	must(t, err)
	ca, err = x509.ParseCertificate(caDER)
	must(t, err)
	write := func(name, typ string, der []byte) {
		must(t, os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600))
	}
	write("ca.pem", "CERTIFICATE", caDER)
	for i, leaf := range []struct {
		name  string
		usage x509.ExtKeyUsage
	}{{"server", x509.ExtKeyUsageServerAuth}, {"client", x509.ExtKeyUsageClientAuth}} {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		must(t, err)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(int64(i + 2)), Subject: pkix.Name{CommonName: leaf.name}, NotBefore: time.Now().Add(-time.Hour),
			NotAfter: time.Now().Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{leaf.usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		must(t, err)
		write(leaf.name+".pem", "CERTIFICATE", der)
		kd, err := x509.MarshalECPrivateKey(key)
		must(t, err)
		write(leaf.name+"-key.pem", "EC PRIVATE KEY", kd)
	}
}

// TestDockerRemoteSSH: an ssh:// engine is reached as the docker CLI does,
// `ssh -o BatchMode=yes -p PORT -- user@host docker system dial-stdio`,
// the API carried on ssh's standard input and output. Here the ssh client
// is a stand-in that runs that command on this machine against the test's
// daemon (the machine has no sshd): the backend's own side (the command, its
// arguments, the connection on its pipes) is real, and so is dial-stdio.
func TestDockerRemoteSSH(t *testing.T) {
	t.Parallel()
	host := dockertest.Host(t)
	dockertest.Image(t, host)
	dir := t.TempDir()
	fake := filepath.Join(dir, "ssh")
	must(t, os.WriteFile(fake, []byte(`#!/bin/sh
echo "$@" > `+filepath.Join(dir, "args")+`
while [ "$1" != "--" ]; do shift; done
shift; shift
DOCKER_HOST=`+host+` exec "$@"
`), 0o755))
	b, err := docker.New(docker.Config{ID: "far", Host: "ssh://tester@box.example:2222", SSHCommand: fake, Install: install, Network: "none",
		CopierBinary: dockertest.Busybox})
	must(t, err)
	t.Cleanup(func() { _ = b.Close() })
	ctx := context.Background()
	must(t, b.Ping(ctx))
	args, err := os.ReadFile(filepath.Join(dir, "args"))
	must(t, err)
	if got := strings.TrimSpace(string(args)); got != "-o BatchMode=yes -p 2222 -- tester@box.example docker system dial-stdio" {
		t.Fatalf("ssh ran with %q", got)
	}
	box := providertest.NewID("bx")
	g, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: box, Kind: docker.KindLinux, Install: install}, Template: dockertest.TestImage})
	must(t, err)
	t.Cleanup(func() { _ = b.Release(context.Background(), g) })
	if g.Host != "box.example" {
		t.Errorf("a box over ssh is on %q, want box.example", g.Host)
	}
	writeState(t, b, g, "over ssh")
	ref := take(t, b, g, box)
	if h, ok := held(t, b, ref.ID); !ok || h.Incomplete {
		t.Fatalf("a take over ssh is listed %v %+v", ok, h)
	}
}
