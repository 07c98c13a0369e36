package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBadWebConfigAndKubeconfig extends TestBadInput with web config files that are valid YAML
// but unusable, and kubeconfigs that cannot be read. test/reliability runs the same cases
// against the release binary (and the unreadable-file case as an unprivileged user).
func TestBadWebConfigAndKubeconfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	missingCert := write("missing-cert.yml", "tls_server_config:\n  cert_file: absent.crt\n  key_file: absent.key\n")
	missingKey := write("missing-key.yml", "tls_server_config:\n  cert_file: "+write("garbage.crt", "not a certificate")+"\n")
	certPEM, keyPEM := selfSigned(t)
	write("tls.crt", string(certPEM))
	write("tls.key", string(keyPEM))
	caWithoutAuth := write("ca-no-auth.yml", "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n  client_ca_file: tls.crt\n")
	badVersion := write("bad-version.yml", "tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n  min_version: TLS9\n")
	certRef := write("cert-ref.kubeconfig", `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {client-certificate: /nonexistent/client.crt, client-key: /nonexistent/client.key}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
`)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string // substrings of stderr
	}{
		{"web config: cert file missing", []string{"--web.config.file", missingCert}, exitUsage,
			[]string{"invalid --web.config.file " + missingCert, "cert_file", "absent.crt", "no such file"}},
		{"web config: key missing", []string{"--web.config.file", missingKey}, exitUsage,
			[]string{"invalid --web.config.file", "missing one of key or key_file"}},
		{"web config: client CA without client auth", []string{"--web.config.file", caWithoutAuth}, exitUsage,
			[]string{"invalid --web.config.file", "client CA's have been configured without a Client Auth Policy"}},
		{"web config: unknown TLS version", []string{"--web.config.file", badVersion}, exitUsage,
			[]string{"invalid --web.config.file", "TLS9"}},
		{"kubeconfig is a directory", []string{"--kubeconfig", dir}, exitKubeConfig,
			[]string{"load Kubernetes client config from kubeconfig " + dir, "is a directory"}},
		{"kubeconfig names a missing client certificate", []string{"--kubeconfig", certRef}, exitKubeConfig,
			[]string{"/nonexistent/client.crt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := realMain(tc.args, &stdout, &stderr); code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			for _, want := range tc.want {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr does not contain %q:\n%s", want, stderr.String())
				}
			}
		})
	}
}

// TestWebConfigTLS10Accepted pins down that exporter-toolkit accepts an explicit
// min_version below TLS 1.2 (the default is TLS12); docs/security.md warns against it.
func TestWebConfigTLS10Accepted(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM := selfSigned(t)
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(cfg, []byte("tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n  min_version: TLS10\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := parseOptions([]string{"--web.config.file", cfg}, io.Discard); err != nil {
		t.Fatalf("min_version TLS10 rejected (%v): update docs/security.md", err)
	}
}

// selfSigned returns a throw-away ECDSA certificate and key in PEM, so the web config validates.
func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// TestListenAddressInUse: when the listen address is taken the command must exit 1 with the
// reason. It used to hang: run's deferred informer Shutdown waited for informers that only
// stop when the process is signalled.
func TestListenAddressInUse(t *testing.T) {
	// Any HTTP answer satisfies the start-up reachability check; the informers' failing lists
	// do not matter here.
	api := httptest.NewServer(http.NotFoundHandler())
	defer api.Close()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "`+api.URL+`"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
`), 0o600); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- realMain([]string{"--kubeconfig", kubeconfig, "--web.listen-address", busy.Addr().String()}, io.Discard, &stderr)
	}()
	select {
	case code := <-done:
		if code != exitRuntime || !strings.Contains(stderr.String(), "listen on --web.listen-address "+busy.Addr().String()) {
			t.Fatalf("exit code %d, want %d with the listen error; stderr:\n%s", code, exitRuntime, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("lease-exporter did not exit within 30 s although its listen address is taken")
	}
}
