package reliability_test

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	scrapeUser, scrapePassword = "prometheus", "correct horse battery staple"
	// scrapePasswordHash is bcrypt(scrapePassword) at the minimum cost, computed once so that
	// the test module needs no bcrypt of its own (htpasswd -nbB -C 4 prints the same kind).
	scrapePasswordHash = "$2a$04$XXVYtvVwmqzSkMvS5qnoTOpobW8O5MRa.I3mK08wBRpxq8i3V5xZO"
)

// TestBasicAuth: with basic_auth_users every path needs credentials, the probes and the
// lease status pages included.
func TestBasicAuth(t *testing.T) {
	ns := newNamespace(t, "sec-basic")
	createLease(t, ns, "l1", "pod-1", 3600)
	cfg := writeWebConfig(t, t.TempDir(), basicAuthUsers(t))
	e := startRaw(t, "--kubeconfig="+env.CP.KubeconfigPath(), "--namespaces="+ns, "--web.config.file="+cfg)
	c := &http.Client{Timeout: 10 * time.Second}
	base := "http://" + e.addr
	waitAuthReady(t, c, base)
	for _, path := range []string{"/metrics", "/healthz", "/readyz", "/", "/leases", "/leases/" + ns + "/l1",
		"/api/v1/leases", "/api/v1/leases/" + ns + "/l1"} {
		if code, hdr, _ := request(t, c, base+path, "", ""); code != http.StatusUnauthorized || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Basic") {
			t.Errorf("%s without credentials: %d (WWW-Authenticate %q), want 401 with a Basic challenge", path, code, hdr.Get("WWW-Authenticate"))
		}
		if code, _, _ := request(t, c, base+path, scrapeUser, "wrong"); code != http.StatusUnauthorized {
			t.Errorf("%s with a wrong password: %d, want 401", path, code)
		}
		if code, _, _ := request(t, c, base+path, "intruder", scrapePassword); code != http.StatusUnauthorized {
			t.Errorf("%s as an unknown user: %d, want 401", path, code)
		}
		if code, _, _ := request(t, c, base+path, scrapeUser, scrapePassword); code != http.StatusOK {
			t.Errorf("%s with credentials: %d, want 200", path, code)
		}
	}
	if _, _, body := request(t, c, base+"/metrics", scrapeUser, scrapePassword); !strings.Contains(body, `lease="l1"`) {
		t.Error("authenticated scrape lacks the lease")
	}
}

// TestTLS: TLS with basic auth, TLS 1.2 minimum by default.
func TestTLS(t *testing.T) {
	ns := newNamespace(t, "sec-tls")
	ca := newCA(t, "lease-exporter-test-ca")
	dir := serverCertFiles(t, ca)
	cfg := writeWebConfig(t, dir, "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"+basicAuthUsers(t))
	e := startRaw(t, "--kubeconfig="+env.CP.KubeconfigPath(), "--namespaces="+ns, "--web.config.file="+cfg)
	c := tlsClient(&tls.Config{RootCAs: ca.pool()})
	base := "https://" + e.addr
	waitAuthReady(t, c, base)
	if code, _, _ := request(t, c, base+"/metrics", "", ""); code != http.StatusUnauthorized {
		t.Errorf("TLS without credentials: %d, want 401", code)
	}
	if code, _, _ := request(t, c, base+"/metrics", scrapeUser, scrapePassword); code != http.StatusOK {
		t.Errorf("TLS with credentials: %d, want 200", code)
	}
	// Plain HTTP to the TLS port gets Go's 400, never the metrics.
	if code, _, body := request(t, &http.Client{Timeout: 10 * time.Second}, "http://"+e.addr+"/metrics", scrapeUser, scrapePassword); code != http.StatusBadRequest {
		t.Errorf("plain HTTP to the TLS port: %d %q, want 400", code, body)
	}
	for _, tc := range []struct {
		name     string
		cfg      *tls.Config
		wantFail string // substring of the handshake error, "" for success
	}{
		{"TLS 1.1 at most", &tls.Config{RootCAs: ca.pool(), MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}, "protocol version"},
		{"TLS 1.2 at most", &tls.Config{RootCAs: ca.pool(), MaxVersion: tls.VersionTLS12}, ""},
		{"TLS 1.3", &tls.Config{RootCAs: ca.pool(), MinVersion: tls.VersionTLS13}, ""},
		{"untrusted server certificate", &tls.Config{}, "certificate signed by unknown authority"},
	} {
		err := handshake(e.addr, tc.cfg)
		if tc.wantFail == "" && err != nil || tc.wantFail != "" && (err == nil || !strings.Contains(err.Error(), tc.wantFail)) {
			t.Errorf("%s: handshake error %v, want %q", tc.name, err, tc.wantFail)
		}
	}
}

// TestMutualTLS: RequireAndVerifyClientCert admits only clients with a certificate from client_ca_file.
func TestMutualTLS(t *testing.T) {
	ns := newNamespace(t, "sec-mtls")
	ca := newCA(t, "lease-exporter-test-ca")
	dir := serverCertFiles(t, ca)
	writeFiles(t, dir, map[string][]byte{"client-ca.crt": ca.pem})
	cfg := writeWebConfig(t, dir, "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"+
		"  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: client-ca.crt\n")
	e := startRaw(t, "--kubeconfig="+env.CP.KubeconfigPath(), "--namespaces="+ns, "--web.config.file="+cfg)
	base := "https://" + e.addr
	good := tlsClient(&tls.Config{RootCAs: ca.pool(), Certificates: []tls.Certificate{ca.clientCert(t, "prometheus")}})
	waitAuthReady(t, good, base)
	if code, _, _ := request(t, good, base+"/metrics", "", ""); code != http.StatusOK {
		t.Errorf("client certificate from the trusted CA: %d, want 200", code)
	}
	other := newCA(t, "some-other-ca")
	for name, cfg := range map[string]*tls.Config{
		"no client certificate":         {RootCAs: ca.pool()},
		"certificate from another CA":   {RootCAs: ca.pool(), Certificates: []tls.Certificate{other.clientCert(t, "prometheus")}},
		"no client certificate, TLS1.2": {RootCAs: ca.pool(), MaxVersion: tls.VersionTLS12},
	} {
		resp, err := tlsClient(cfg).Get(base + "/metrics")
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s: got %s, want the connection refused", name, resp.Status)
		}
	}
}

// TestTLSMinVersionBelow12 documents what exporter-toolkit does with min_version TLS10: it
// accepts it and the exporter then speaks TLS 1.0 and 1.1. An explicit downgrade is the
// operator's choice; docs/security.md says not to make it.
func TestTLSMinVersionBelow12(t *testing.T) {
	ns := newNamespace(t, "sec-tls10")
	ca := newCA(t, "lease-exporter-test-ca")
	dir := serverCertFiles(t, ca)
	cfg := writeWebConfig(t, dir, "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  min_version: TLS10\n")
	e := startRaw(t, "--kubeconfig="+env.CP.KubeconfigPath(), "--namespaces="+ns, "--web.config.file="+cfg)
	if err := handshake(e.addr, &tls.Config{RootCAs: ca.pool(), MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}); err != nil {
		t.Errorf("min_version TLS10 no longer admits TLS 1.1 (%v): update docs/security.md", err)
	}
}

func basicAuthUsers(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf("basic_auth_users:\n  %s: %s\n", scrapeUser, scrapePasswordHash)
}

// serverCertFiles writes server.crt and server.key for 127.0.0.1 into a new directory.
func serverCertFiles(t *testing.T, ca *testCA) string {
	t.Helper()
	crt, key := ca.issue(t, "127.0.0.1", true)
	return writeFiles(t, t.TempDir(), map[string][]byte{"server.crt": crt, "server.key": key})
}

// writeWebConfig writes web.yml into dir; relative paths in it resolve against dir.
func writeWebConfig(t *testing.T, dir, content string) string {
	t.Helper()
	path := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func tlsClient(cfg *tls.Config) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

// handshake completes a TLS handshake with addr and closes the connection.
func handshake(addr string, cfg *tls.Config) error {
	cfg.ServerName = "127.0.0.1"
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return err
	}
	return c.Close()
}

// request GETs url, with basic auth when user is set.
func request(t *testing.T, c *http.Client, url, user, password string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(body)
}

// waitAuthReady waits until /readyz answers 200 to an authenticated client.
func waitAuthReady(t *testing.T, c *http.Client, base string) {
	t.Helper()
	eventually(t, 2*time.Minute, "authenticated /readyz 200", func() (bool, string) {
		code, _, body := request(t, c, base+"/readyz", scrapeUser, scrapePassword)
		return code == http.StatusOK, fmt.Sprintf("%d %s", code, body)
	})
}
