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

	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// The history of a lock is what only an observer of every write knows: describe reads it
// from an exporter's JSON API (GET /api/v1/leases/{namespace}/{name}), at a URL or through a
// port-forward to a Pod behind its Service (portforward.go). Nothing in the answer is
// trusted: it must be about the lock the API server holds, and every field is escaped.

// exporterError is a failed read of the exporter, with the fix to name.
type exporterError struct {
	where, fix string
	err        error
}

func (e *exporterError) Error() string {
	return fmt.Sprintf("cannot read the history from the exporter at %s: %v; %s", e.where, e.err, e.fix)
}
func (e *exporterError) Unwrap() error { return e.err }

// exporterDetail reads l's detail from the exporter --exporter or --exporter-service names;
// nil, with no error, when neither is given. An answer about another lock (another
// cluster's, or an incarnation before l) is an error, never l's history.
func exporterDetail(ctx context.Context, o *options, src *source, l *lock.Lease) (*api.Detail, string, error) {
	path := "api/v1/leases/" + url.PathEscape(l.Namespace()) + "/" + url.PathEscape(l.Name())
	kind := l.Kind().String()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var body []byte
	var where string
	var err error
	switch {
	case o.exporter != "":
		where = redactURL(o.exporter)
		body, err = getExporter(ctx, o.exporter, path, kind)
	case o.exporterService != "":
		where = "service " + o.exporterService
		body, err = getThroughForward(ctx, src, o.exporterService, path, kind)
	default:
		return nil, "", nil
	}
	if err != nil {
		return nil, where, err
	}
	var d api.Detail
	if err := json.Unmarshal(body, &d); err != nil {
		return nil, where, &exporterError{where: where, err: fmt.Errorf("its answer is no lease-exporter detail: %v", err),
			fix: "check that the URL or Service is a lease-exporter's"}
	}
	if err := sameLock(&d, l); err != nil {
		return nil, where, &exporterError{where: where, err: err,
			fix: "it watches another cluster, or the lock was deleted and recreated since it looked: give this cluster's exporter (kubectl config current-context names the cluster), or try again in a few seconds"}
	}
	return &d, where, nil
}

// sameLock checks that the exporter's answer d is about l: the same kind, namespace and
// name, and the same incarnation (UID). A name alone does not say which cluster it is in.
func sameLock(d *api.Detail, l *lock.Lease) error {
	uid := l.UID.String()
	if d.Kind == l.Kind().String() && d.Namespace == l.Namespace() && d.Name == l.Name() && d.UID == uid {
		return nil
	}
	return fmt.Errorf("its answer is about another lock: %s %s/%s with UID %s, not the %s %s/%s with UID %s that the API server holds",
		orNone(d.Kind), d.Namespace, d.Name, orNone(d.UID), l.Kind(), l.Namespace(), l.Name(), uid)
}

// exporterClient follows a redirect only within the scheme and host the user gave: one to
// another host could take the request (and the URL's credentials) elsewhere, and one from
// https to http would read the history in the clear.
func exporterClient() *http.Client {
	return &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
		from := via[0].URL
		if req.URL.Scheme != from.Scheme || !strings.EqualFold(req.URL.Host, from.Host) {
			return &redirectError{to: req.URL}
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}}
}

// redirectError is a redirect exporterClient's client refused.
type redirectError struct{ to *url.URL }

func (e *redirectError) Error() string {
	return "it redirects to " + redactURL(e.to.String()) + ", another scheme or host, which describe does not follow"
}

func getExporter(ctx context.Context, base, path, kind string) ([]byte, error) {
	where := redactURL(base)
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &exporterError{where: where, err: errors.New("not an http(s) URL"), fix: "give --exporter as http://HOST:PORT (the exporter's --web.listen-address)"}
	}
	u = u.JoinPath(path)
	u.RawQuery = url.Values{"kind": {kind}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &exporterError{where: where, err: errors.New("not a URL a request can be made to"), fix: "give --exporter as http://HOST:PORT (the exporter's --web.listen-address)"}
	}
	resp, err := exporterClient().Do(req)
	if err != nil {
		var re *redirectError
		if errors.As(err, &re) {
			return nil, &exporterError{where: where, err: re, fix: "give --exporter as the URL it redirects to, if you trust that server"}
		}
		return nil, &exporterError{where: where, err: requestError(err), fix: "check --exporter, or reach the exporter with kubectl port-forward and --exporter http://127.0.0.1:PORT"}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, &exporterError{where: where, err: requestError(err), fix: "try again"}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &exporterError{where: where, err: fmt.Errorf("%s: %s", resp.Status, answerError(body)), fix: statusFix(resp.StatusCode)}
	}
	return body, nil
}

// requestError is err from the HTTP client without the URL it names, which would carry
// the URL's user name (net/http hides only the password): the message names the URL,
// redacted, already.
func requestError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redactURL is the URL s with no user info, for every message: a password (or a token as a
// user name) given in --exporter is never printed. What does not parse as a URL loses all
// before its last "@", as a password may hold any character.
func redactURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case err == nil && u.Opaque == "" && u.User == nil:
		return s
	case err == nil && u.Opaque == "":
		u.User = nil
		return u.String()
	}
	if i := strings.LastIndex(s, "@"); i >= 0 {
		return "…" + s[i:]
	}
	return s
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
		return fmt.Sprintf("ask for \"get\" on services, \"list\" on endpointslices.discovery.k8s.io and \"create\" on pods/portforward in namespace %s (RBAC), or give --exporter URL", ns)
	case apierrors.IsNotFound(err):
		return "check the Service's namespace and name: kubectl get services -n " + ns
	}
	return "check --context, or give --exporter URL"
}

// forwardFix names the fix for a port-forward that could not start.
func forwardFix(err error, ns string) string {
	if apierrors.IsForbidden(err) {
		return serviceFix(err, ns)
	}
	return "check that the exporter's Pod runs (kubectl get pods -n " + ns + "), or give --exporter URL"
}
