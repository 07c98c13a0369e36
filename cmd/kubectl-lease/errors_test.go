package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	metadatafake "k8s.io/client-go/metadata/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/lease-exporter/lease-exporter/lock"
)

// Every failure the API server can answer becomes one line that names the fix.
func TestExplainNamesTheFix(t *testing.T) {
	cms := schema.GroupResource{Resource: "configmaps"}
	leases := schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"forbidden ConfigMaps", lockError("list", lock.KindConfigMap, "apps", apierrors.NewForbidden(cms, "", errors.New("denied"))),
			`cannot list configmaps in namespace apps: forbidden (configmaps is forbidden: denied); ask for "list" on configmaps (RBAC), or leave ConfigMap locks out: --locks leases`},
		{"forbidden Leases across namespaces", lockError("list", lock.KindLease, "", apierrors.NewForbidden(leases, "", errors.New("denied"))),
			`cannot list leases in all namespaces: forbidden (leases.coordination.k8s.io is forbidden: denied); ask for "list" on leases.coordination.k8s.io (RBAC)`},
		{"unauthorized", lockError("list", lock.KindLease, "apps", apierrors.NewUnauthorized("token expired")),
			"cannot list leases in namespace apps: the API server did not accept your credentials (token expired); log in again or pick another --context"},
		{"not served", lockError("list", lock.KindLease, "apps", apierrors.NewNotFound(leases, "")),
			`cannot list leases in namespace apps: the API server does not serve leases.coordination.k8s.io (leases.coordination.k8s.io "" not found); check --context, or leave that kind out with --locks`},
		{"unreachable", lockError("list", lock.KindLease, "apps", &url.Error{Op: "Get", URL: "https://10.0.0.1:6443", Err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}}),
			"cannot list leases in namespace apps: the API server cannot be reached (Get \"https://10.0.0.1:6443\": dial: connection refused); check --context, --server and your network"},
		{"exporter", &exporterError{where: "http://x", err: errors.New("refused"), fix: "check --exporter"},
			"cannot read the history from the exporter at http://x: refused; check --exporter"},
	} {
		got := explain(tc.err)
		if got != tc.want || strings.Contains(got, "\n") {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// Bad flags fail before any request, each with what to type instead.
func TestValidateRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--locks", "secrets"}, `invalid --locks "secrets": unknown lock kind "secrets": use leases, configmaps or endpoints, comma-separated`},
		{[]string{"--class", "nodes"}, `invalid --class "nodes": unknown class "nodes": use leader-election, node-heartbeat or apiserver-identity`},
		{[]string{"-o", "table"}, `unable to match a printer suitable for the output format "table", allowed formats are: custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,`},
		{[]string{"-w", "-o", "json"}, "--watch prints the table or -o wide, not -o json"},
		{[]string{"-o", "jsonpath={.leases[0"}, "invalid -o jsonpath={.leases[0: "},
		{[]string{"-o", "custom-columns=NAME"}, "invalid -o custom-columns: unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"},
		{[]string{"-o", "custom-columns=NAME:.leases[0"}, `invalid -o custom-columns path "{.leases[0}": `},
		{[]string{"-o", "custom-columns-file=/nonexistent"}, "invalid -o custom-columns-file: error reading template /nonexistent, open /nonexistent: no such file or directory"},
		{[]string{"-l", "a in (b"}, `invalid label selector "a in (b"`},
		{[]string{"describe", "a/b", "--exporter", "http://x", "--exporter-service", "a/b"}, "--exporter and --exporter-service both name an exporter"},
		{[]string{"describe", "/b"}, `malformed lock "/b": want NAMESPACE/NAME`},
		{[]string{"describe"}, "describe takes one lock, NAMESPACE/NAME (or NAME with -n); got 0 arguments"},
		{[]string{"nonsense"}, `unknown command "nonsense" for "kubectl lease"`},
	} {
		_, _, err := runWith(t, fixture(t), tc.args...)
		if err == nil || !strings.HasPrefix(explain(err), tc.want) {
			t.Errorf("%v: error %v, want it to start %q", tc.args, err, tc.want)
		}
	}
}

// A list the API server refuses ends the read with one line naming the fix, where the
// informer's reflector would retry it for ever.
func TestARefusedListEndsTheReadWithTheFix(t *testing.T) {
	src := fixture(t)
	cms := schema.GroupResource{Resource: "configmaps"}
	src.clients.MetaList.(*metadatafake.FakeMetadataClient).PrependReactor("list", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(cms, "", errors.New("denied"))
	})
	_, _, err := runWith(t, src, "-A", "--locks", "leases,configmaps")
	want := `cannot list configmaps in all namespaces: forbidden (configmaps is forbidden: denied); ask for "list" on configmaps (RBAC), or leave ConfigMap locks out: --locks leases`
	if err == nil || explain(err) != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// A --context the kubeconfig lacks is said as kubectl says it, before the namespace is read
// from it (which would bury it under "reading the namespace").
func TestUnknownContextIsSaidAsKubectlSaysIt(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"--kubeconfig", kubeconfig, "--context", "nosuch"}, genericiooptions.IOStreams{Out: &out, ErrOut: &errb})
	if want := "error: context \"nosuch\" does not exist\n"; code != 1 || errb.String() != want {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, errb.String(), want)
	}
}
