package s3test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// tlsFiles are a server's certificate and key, and the CA that signed the
// certificate, as PEM files.
type tlsFiles struct {
	cert, key, ca string
}

// StartTLS starts a versitygw for the test that serves HTTPS on loopback,
// with a certificate for 127.0.0.1 signed by a CA of the test's own (the
// server's CAFile), and stops it when the test ends. It skips as Start does.
func StartTLS(t testing.TB) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("a real S3 server is needed and is not there: %v", err)
		}
		t.Skipf("skipped: %v", err)
	}
	files, err := makeTLSFiles(t.TempDir())
	if err != nil {
		t.Fatalf("a certificate for versitygw: %v", err)
	}
	s, err := startServer(bin, t.TempDir(), files)
	if err != nil {
		t.Fatalf("start versitygw over TLS: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// makeTLSFiles writes a CA and a certificate for 127.0.0.1 it signed, with
// the certificate's key, into dir.
func makeTLSFiles(dir string) (*tlsFiles, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "boxsnap test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	f := &tlsFiles{cert: filepath.Join(dir, "cert.pem"), key: filepath.Join(dir, "key.pem"), ca: filepath.Join(dir, "ca.pem")}
	for path, block := range map[string]*pem.Block{
		f.cert: {Type: "CERTIFICATE", Bytes: der},
		f.key:  {Type: "EC PRIVATE KEY", Bytes: keyDER},
		f.ca:   {Type: "CERTIFICATE", Bytes: caDER},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// caTransport is an HTTP transport that trusts the certificates in the
// PEM file caFile.
func caTransport(caFile string) (http.RoundTripper, error) {
	p, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(p) {
		return nil, errors.New(caFile + " holds no PEM certificate")
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return t, nil
}
