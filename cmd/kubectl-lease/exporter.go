package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/informer/lock"
	"github.com/lease-exporter/lease-exporter/statuspage"
)

// The history of a lock is what only an observer of every write knows: describe reads it
// from an exporter's JSON API (GET /api/v1/leases/{namespace}/{name}), directly or through
// the API server's service proxy with the user's own credentials.

// exporterError is a failed read of the exporter, with the fix to name.
type exporterError struct {
	where, fix string
	err        error
}

func (e *exporterError) Error() string { return explainExporter(e) }
func (e *exporterError) Unwrap() error { return e.err }

func explainExporter(err error) string {
	var ee *exporterError
	if !errors.As(err, &ee) {
		return err.Error()
	}
	return fmt.Sprintf("cannot read the history from the exporter at %s: %v; %s", ee.where, ee.err, ee.fix)
}

// exporterDetail reads l's detail from the exporter --exporter or --exporter-service names;
// nil, with no error, when neither is given.
func exporterDetail(ctx context.Context, o *options, src *source, l *lock.Lease) (*statuspage.Detail, string, error) {
	path := "api/v1/leases/" + url.PathEscape(l.Namespace()) + "/" + url.PathEscape(l.Name())
	kind := l.Kind().String()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var body []byte
	var where string
	var err error
	switch {
	case o.exporter != "":
		where = o.exporter
		body, err = getExporter(ctx, o.exporter, path, kind)
	case o.exporterService != "":
		where = "service " + o.exporterService
		body, err = getThroughProxy(ctx, src, o.exporterService, path, kind)
	default:
		return nil, "", nil
	}
	if err != nil {
		return nil, where, err
	}
	var d statuspage.Detail
	if err := json.Unmarshal(body, &d); err != nil {
		return nil, where, &exporterError{where: where, err: fmt.Errorf("its answer is no lease-exporter detail: %v", err),
			fix: "check that the URL or Service is a lease-exporter's"}
	}
	return &d, where, nil
}

func getExporter(ctx context.Context, base, path, kind string) ([]byte, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &exporterError{where: base, err: errors.New("not an http(s) URL"), fix: "give --exporter as http://HOST:PORT (the exporter's --web.listen-address)"}
	}
	u = u.JoinPath(path)
	u.RawQuery = url.Values{"kind": {kind}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, &exporterError{where: base, err: err, fix: "check --exporter, or reach it through the API server with --exporter-service NAMESPACE/NAME"}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, &exporterError{where: base, err: err, fix: "try again"}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &exporterError{where: base, err: fmt.Errorf("%s: %s", resp.Status, answerError(body)), fix: statusFix(resp.StatusCode)}
	}
	return body, nil
}

// getThroughProxy reads path from the Service ref (NAMESPACE/NAME[:PORT]) through the API
// server's service proxy; without a port, the Service's first.
func getThroughProxy(ctx context.Context, src *source, ref, path, kind string) ([]byte, error) {
	ns, name, ok := strings.Cut(ref, "/")
	name, port, _ := strings.Cut(name, ":")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return nil, &exporterError{where: ref, err: errors.New("malformed Service"), fix: "give --exporter-service as NAMESPACE/NAME or NAMESPACE/NAME:PORT"}
	}
	if port == "" {
		svc, err := src.client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, &exporterError{where: "service " + ref, err: err, fix: serviceFix(err, ns)}
		}
		if len(svc.Spec.Ports) == 0 {
			return nil, &exporterError{where: "service " + ref, err: errors.New("the Service has no ports"), fix: "name the port: NAMESPACE/NAME:PORT"}
		}
		port = svc.Spec.Ports[0].Name
		if port == "" {
			port = fmt.Sprint(svc.Spec.Ports[0].Port)
		}
	}
	body, err := src.client.CoreV1().Services(ns).ProxyGet("", name, port, path, map[string]string{"kind": kind}).DoRaw(ctx)
	if err != nil {
		var se apierrors.APIStatus
		if errors.As(err, &se) && se.Status().Code == http.StatusNotFound && len(body) > 0 && json.Valid(body) {
			// The exporter's own 404: it has no such lock (another shard's, or not watched).
			return nil, &exporterError{where: "service " + ref, err: errors.New(answerError(body)), fix: statusFix(http.StatusNotFound)}
		}
		return nil, &exporterError{where: "service " + ref, err: err, fix: serviceFix(err, ns)}
	}
	return body, nil
}

// answerError is the exporter's {"error": ...} answer, or the body.
func answerError(body []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		return e.Error
	}
	return strings.ToValidUTF8(strings.TrimSpace(string(body[:min(len(body), 200)])), "")
}

func statusFix(code int) string {
	if code == http.StatusNotFound {
		return "the exporter does not watch this lock: check its --locks, --namespaces and --lease-selector, or, when sharded, ask the shard that owns it"
	}
	return "check the exporter's logs"
}

func serviceFix(err error, ns string) string {
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Sprintf("ask for \"get\" on services and services/proxy in namespace %s (RBAC), or use --exporter URL", ns)
	case apierrors.IsNotFound(err):
		return "check the Service's namespace and name: kubectl get services -n " + ns
	case apierrors.IsServiceUnavailable(err):
		return "the Service has no ready endpoint: check the exporter's Pods"
	}
	return "check that the Service reaches a running exporter"
}
