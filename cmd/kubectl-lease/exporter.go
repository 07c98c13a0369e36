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

// A lock's history is what only an observer of every write knows: describe reads it from an
// exporter's JSON API (GET /api/v1/leases/{namespace}/{name}), at a URL or through a
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

const fixURL = "give --exporter as http://HOST:PORT (the exporter's --web.listen-address)"

// exporterDetail reads l's detail from the exporter --exporter or --exporter-service names;
// nil, with no error, when neither is given. An answer about another lock (another
// cluster's, or another incarnation) is an error, never l's history.
func exporterDetail(ctx context.Context, o *options, src *source, l *lock.Lease) (*api.Detail, string, error) {
	path := "api/v1/leases/" + url.PathEscape(l.Namespace()) + "/" + url.PathEscape(l.Name())
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var body []byte
	var where string
	var err error
	switch {
	case o.exporter != "":
		// The user info is taken out once, sent as basic auth and never printed (a password,
		// or a token as the user name); what does not parse is not echoed at all.
		u, perr := url.Parse(o.exporter)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, "--exporter", &exporterError{where: "--exporter", err: errors.New("not an http(s) URL"), fix: fixURL}
		}
		user := u.User
		u.User = nil
		where = u.String()
		body, err = getExporter(ctx, u, user, path, l.Kind().String())
	case o.exporterService != "":
		where = "service " + o.exporterService
		body, err = getThroughForward(ctx, src, o.exporterService, path, l.Kind().String())
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
	// A name alone does not say which cluster, nor which incarnation: the UID does.
	if uid := l.UID.String(); d.Kind != l.Kind().String() || d.Namespace != l.Namespace() || d.Name != l.Name() || d.UID != uid {
		return nil, where, &exporterError{where: where,
			err: fmt.Errorf("its answer is about another lock: %s %s/%s with UID %s, not the %s %s/%s with UID %s that the API server holds",
				orNone(d.Kind), d.Namespace, d.Name, orNone(d.UID), l.Kind(), l.Namespace(), l.Name(), uid),
			fix: "it watches another cluster, or the lock was deleted and recreated since it looked: give this cluster's exporter (kubectl config current-context names the cluster), or try again in a few seconds"}
	}
	return &d, where, nil
}

// noRedirects: a redirect could take the request and its basic auth to another host, or from
// https to http; the exporter's API never redirects.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// getExporter GETs path?kind= from the exporter at base, with user's basic auth.
func getExporter(ctx context.Context, base *url.URL, user *url.Userinfo, path, kind string) ([]byte, error) {
	fail := func(err error, fix string) ([]byte, error) {
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err // without the URL, which the message names already
		}
		return nil, &exporterError{where: base.String(), err: err, fix: fix}
	}
	u := base.JoinPath(path)
	u.RawQuery = url.Values{"kind": {kind}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fail(err, fixURL)
	}
	if user != nil {
		password, _ := user.Password()
		req.SetBasicAuth(user.Username(), password)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		return fail(err, "check --exporter, or reach the exporter with kubectl port-forward and --exporter http://127.0.0.1:PORT")
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	switch to, locErr := resp.Location(); {
	case err != nil:
		return fail(err, "try again")
	case resp.StatusCode == http.StatusOK:
		return body, nil
	case resp.StatusCode == http.StatusNotFound:
		return fail(fmt.Errorf("%s: %s", resp.Status, answerError(body)),
			"the exporter does not watch this lock: check its --locks, --namespaces and --lease-selector, or, when sharded, ask the shard that owns it")
	case locErr == nil: // not the body, which repeats where it leads, user info and all
		to.User = nil
		return fail(errors.New(resp.Status), "describe follows no redirect: give --exporter as the URL it redirects to, "+to.String()+", if you trust that server")
	}
	return fail(fmt.Errorf("%s: %s", resp.Status, answerError(body)), "check the exporter's logs")
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

// serviceFix names the fix for a Service, its EndpointSlices or a port-forward refused or missing.
func serviceFix(err error, ns string) string {
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Sprintf("ask for \"get\" on services, \"list\" on endpointslices.discovery.k8s.io and \"create\" on pods/portforward in namespace %s (RBAC), or give --exporter URL", ns)
	case apierrors.IsNotFound(err):
		return "check the Service's namespace and name: kubectl get services -n " + ns
	}
	return "check --context, or give --exporter URL"
}
