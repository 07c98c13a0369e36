package reliability_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Exit codes of cmd/lease-exporter/exitcode.go, as an operator's script sees them.
const (
	exitRuntime     = 1
	exitUsage       = 2
	exitKubeConfig  = 3
	exitUnreachable = 4
)

// TestBadConfiguration runs the release binary with unusable configuration: it must exit at
// once with the documented code and a message that names the problem.
func TestBadConfiguration(t *testing.T) {
	dir := t.TempDir()
	ca := newCA(t, "bad-config-ca")
	crt, key := ca.issue(t, "127.0.0.1", true)
	writeFiles(t, dir, map[string][]byte{"server.crt": crt, "server.key": key,
		"missing-cert.yml": []byte("tls_server_config:\n  cert_file: absent.crt\n  key_file: server.key\n"),
		"ca-no-auth.yml":   []byte("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_ca_file: server.crt\n"),
		"plaintext.yml":    []byte("basic_auth_users:\n  prometheus: not-a-bcrypt-hash\n"),
	})
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	admin := "--kubeconfig=" + env.CP.KubeconfigPath()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"web config names a missing cert file", []string{"--web.config.file=" + filepath.Join(dir, "missing-cert.yml")},
			exitUsage, []string{"invalid --web.config.file", "failed to read cert_file", "absent.crt"}},
		{"web config: client CA without client_auth_type", []string{"--web.config.file=" + filepath.Join(dir, "ca-no-auth.yml")},
			exitUsage, []string{"invalid --web.config.file", "without a Client Auth Policy"}},
		{"web config: password not bcrypt-hashed", []string{"--web.config.file=" + filepath.Join(dir, "plaintext.yml")},
			exitUsage, []string{"invalid --web.config.file"}},
		{"kubeconfig is a directory", []string{"--kubeconfig=" + dir},
			exitKubeConfig, []string{"load Kubernetes client config from kubeconfig " + dir, "is a directory"}},
		{"API server unreachable", []string{"--kubeconfig=" + unreachableKubeconfig(t, dir), "--kube.reach-timeout=1s",
			"--web.listen-address=127.0.0.1:0"},
			exitUnreachable, []string{"not reachable within 1s"}},
		{"listen address in use", []string{admin, "--namespaces=default", "--web.listen-address=" + busy.Addr().String()},
			exitRuntime, []string{"listen on --web.listen-address " + busy.Addr().String(), "address already in use"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := runBinary(t, nil, tc.args...)
			checkExit(t, code, out, tc.code, tc.want...)
		})
	}
}

// TestUnreadableKubeconfig: tests run as root, which reads any file whatever its mode, so the
// binary runs as nobody (uid 65534) against a kubeconfig with mode 000.
func TestUnreadableKubeconfig(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run the binary as another user")
	}
	// Both the binary and the kubeconfig must sit in directories nobody may enter.
	dir, err := os.MkdirTemp("", "lease-exporter-reliability-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "lease-exporter")
	if err := copyFile(env.Bin, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := copyFile(env.CP.KubeconfigPath(), kubeconfig, 0o000); err != nil {
		t.Fatal(err)
	}
	nobody := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	saved := env.Bin
	env.Bin = bin // runBinary runs env.Bin
	defer func() { env.Bin = saved }()
	code, out := runBinary(t, nobody, "--kubeconfig="+kubeconfig)
	checkExit(t, code, out, exitKubeConfig, "load Kubernetes client config from kubeconfig "+kubeconfig, "permission denied")
}

func checkExit(t *testing.T, code int, out string, wantCode int, want ...string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("exit code %d, want %d; output:\n%s", code, wantCode, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output does not contain %q:\n%s", w, out)
		}
	}
	if lines := strings.Count(strings.TrimSpace(out), "\n") + 1; lines > 6 {
		t.Errorf("a configuration error should be a short message, got %d lines:\n%s", lines, out)
	}
}

// unreachableKubeconfig writes a kubeconfig for a port nothing listens on.
func unreachableKubeconfig(t *testing.T, dir string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	path := filepath.Join(dir, "unreachable.kubeconfig")
	content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://%s", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: unreachable-token}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
`, addr)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("open %s: %w", src, err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", dst, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("close %s: %w", dst, err)
	}
	return os.Chmod(dst, mode)
}
