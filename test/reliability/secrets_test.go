package reliability_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
)

// TestNoSecretsInLogs runs the exporter at --log.level=debug with a ServiceAccount token, with
// a client certificate, and with a token the API server rejects, through sync, an API server
// restart and (for the rejected one) a stream of 401s, and checks that no credential appears
// in any output.
func TestNoSecretsInLogs(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "sec-logs")
	createLease(t, ns, "l1", "pod-1", 3600)

	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lease-exporter"}}
	if _, err := env.Client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := env.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token request: %v", err)
	}
	token := tr.Status.Token
	grantLeaseReader(t, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa.Name})
	tokenKubeconfig, err := env.CP.KubeconfigForToken(token)
	if err != nil {
		t.Fatal(err)
	}
	const user = "lease-exporter-logs"
	grantLeaseReader(t, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user})
	certKubeconfig, err := env.CP.KubeconfigForUser(user)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.LoadFromFile(certKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := kc.AuthInfos[user].ClientKeyData
	const rejected = "rejected-secret-token-7f3c9a1e5b2d4f60"
	rejectedKubeconfig, err := env.CP.KubeconfigForToken(rejected)
	if err != nil {
		t.Fatal(err)
	}

	debug := []string{"--namespaces=" + ns, "--log.level=debug"}
	exps := map[string]*exporterproc.Exporter{
		"token (json)":   env.StartExporter(t, env.Bin, append(debug, "--kubeconfig="+tokenKubeconfig, "--log.format=json")...),
		"cert (text)":    env.StartExporter(t, env.Bin, append(debug, "--kubeconfig="+certKubeconfig)...),
		"rejected token": env.StartExporter(t, env.Bin, append(debug, "--kubeconfig="+rejectedKubeconfig, "--log.format=json")...),
	}
	for _, name := range []string{"token (json)", "cert (text)"} {
		if err := exps[name].WaitReady(ctx, 2*time.Minute); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	env.StopAPIServer(t)
	time.Sleep(2 * time.Second)
	env.StartAPIServer(t)
	for _, name := range []string{"token (json)", "cert (text)"} {
		waitWatchUp(t, exps[name])
	}
	waitFor(t, exps["rejected token"], "unauthorized errors", func(s *exporterproc.Scrape) bool {
		u := s.Series("lease_exporter_watch_errors_total", map[string]string{"reason": "unauthorized"})
		return len(u) == 1 && u[0].Value > 0
	})

	secrets := map[string]string{
		"ServiceAccount token":            token,
		"token signature":                 token[strings.LastIndexByte(token, '.')+1:],
		"rejected token":                  rejected,
		"client key PEM":                  string(keyPEM),
		"client key body":                 pemBody(string(keyPEM)),
		"client key as in the kubeconfig": base64.StdEncoding.EncodeToString(keyPEM),
		"any private key header":          "PRIVATE KEY",
	}
	for name, exp := range exps {
		logs := exp.Logs()
		if !strings.Contains(logs, "debug") && !strings.Contains(logs, "DEBUG") && !strings.Contains(logs, "DBG") {
			t.Logf("%s: no debug-level lines were produced", name)
		}
		for what, secret := range secrets {
			if secret != "" && strings.Contains(logs, secret) {
				t.Errorf("%s: the %s appears in the log", name, what)
			}
		}
		if body := scrape(t, exp).Text; strings.Contains(body, token) || strings.Contains(body, rejected) {
			t.Errorf("%s: a token appears in /metrics", name)
		}
	}
}

// pemBody returns the longest base64 line of a PEM block: a fragment a log could leak alone.
func pemBody(p string) string {
	longest := ""
	for _, line := range strings.Split(p, "\n") {
		if !strings.HasPrefix(line, "-----") && len(line) > len(longest) {
			longest = line
		}
	}
	return longest
}
