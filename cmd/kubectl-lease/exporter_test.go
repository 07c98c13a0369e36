package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// schedulerDetail is an exporter's answer about the fixture's kube-scheduler Lease, with a
// history whose holder the tests look for.
func schedulerDetail(t *testing.T, src *source) api.Detail {
	return api.Detail{Lease: api.Lease{Namespace: "kube-system", Name: "kube-scheduler", Kind: "Lease", Class: "leader-election"},
		UID: uidOf(t, src, "kube-system", "kube-scheduler"),
		History: &api.History{Tenures: []api.Tenure{
			{Holder: "elsewhere-holder", From: t0.Add(-time.Hour), HeldSeconds: ptr.To(3600.0), SeenLive: true},
		}}}
}

func serveDetail(t *testing.T, d api.Detail) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(d)
	}))
	t.Cleanup(s.Close)
	return s
}

// An answer about another lock (another cluster's same-named Lease, a previous incarnation,
// another namespace, name or kind) fails describe and says so; its history is not printed.
func TestDescribeRefusesAnAnswerAboutAnotherLock(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*api.Detail)
	}{
		{"another UID", func(d *api.Detail) { d.UID = "0e6c3a51-5b1e-4c39-9d6a-3f1b2c4d5e6f" }},
		{"no UID", func(d *api.Detail) { d.UID = "" }},
		{"another namespace", func(d *api.Detail) { d.Namespace = "kube-public" }},
		{"another name", func(d *api.Detail) { d.Name = "kube-controller-manager" }},
		{"another kind", func(d *api.Detail) { d.Kind = "ConfigMap" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := fixture(t)
			d := schedulerDetail(t, src)
			tc.change(&d)
			exporter := serveDetail(t, d)
			out, _, err := runWith(t, src, "describe", "kube-system/kube-scheduler", "--exporter", exporter.URL)
			if err == nil || !strings.Contains(err.Error(), "its answer is about another lock") || !strings.Contains(err.Error(), "give this cluster's exporter") {
				t.Errorf("err %v, want one saying the answer is about another lock", err)
			}
			if strings.Contains(out, "elsewhere-holder") || !strings.Contains(out, "History:           <unknown: cannot read the history from the exporter at "+exporter.URL+": its answer is about another lock") {
				t.Errorf("describe printed another lock's history, or did not say why it has none:\n%s", out)
			}
		})
	}
	src := fixture(t)
	if out, _, err := runWith(t, src, "describe", "kube-system/kube-scheduler", "--exporter", serveDetail(t, schedulerDetail(t, src)).URL); err != nil || !strings.Contains(out, "elsewhere-holder") {
		t.Errorf("the same lock's answer: err %v, output:\n%s", err, out)
	}
}

// describe follows no redirect, to another host (which could take the basic auth along) nor
// within the exporter's own: the error names where it leads, without its user info, and the
// other host is never asked.
func TestDescribeFollowsNoRedirect(t *testing.T) {
	src := fixture(t)
	var elsewhereAsked atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhereAsked.Add(1)
		_ = json.NewEncoder(w).Encode(schedulerDetail(t, src))
	}))
	defer elsewhere.Close()
	detail := schedulerDetail(t, src)
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/here/"):
			_ = json.NewEncoder(w).Encode(detail)
		case strings.HasPrefix(r.URL.Path, "/same-host/"):
			http.Redirect(w, r, "/here/", http.StatusFound)
		default:
			http.Redirect(w, r, "http://user:hunter2@"+strings.TrimPrefix(elsewhere.URL, "http://")+r.URL.Path, http.StatusFound)
		}
	}))
	defer exporter.Close()

	for base, to := range map[string]string{
		exporter.URL:                "the URL it redirects to, " + elsewhere.URL + "/api/v1/leases/kube-system/kube-scheduler, if you trust that server",
		exporter.URL + "/same-host": "the URL it redirects to, " + exporter.URL + "/here/, if you trust that server",
	} {
		out, stderr, err := runWith(t, src, "describe", "kube-system/kube-scheduler", "--exporter", base)
		if err == nil || !strings.Contains(explain(err), "302 Found") || !strings.Contains(explain(err), "describe follows no redirect: give --exporter as "+to) {
			t.Errorf("%s: err %v, want a 302 refused, naming %q", base, err, to)
			continue
		}
		if all := out + stderr + explain(err); strings.Contains(all, "hunter2") || strings.Contains(all, "user") {
			t.Errorf("the redirect's user info was printed:\n%s", all)
		}
	}
	if n := elsewhereAsked.Load(); n != 0 {
		t.Errorf("the other host was asked %d times", n)
	}
}

// A URL's user info (a password, or a token as the user name) is sent, as HTTP basic auth,
// but never printed: not in the history's heading, not in any error.
func TestDescribeNeverPrintsAURLsUserInfo(t *testing.T) {
	src := fixture(t)
	detail := schedulerDetail(t, src)
	var gotUser, gotPassword atomic.Value
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		gotUser.Store(u)
		gotPassword.Store(p)
		if r.URL.Query().Get("fail") != "" || strings.Contains(r.URL.Path, "missing") {
			http.Error(w, `{"error":"nope"}`, http.StatusNotFound)
			return
		}
		_ = json.NewEncoder(w).Encode(detail)
	}))
	defer exporter.Close()
	host := strings.TrimPrefix(exporter.URL, "http://")

	out, stderr, err := runWith(t, src, "describe", "kube-system/kube-scheduler", "--exporter", "http://scraper:hunter2@"+host)
	if err != nil || !strings.Contains(out, "History (from http://"+host+", as of ") {
		t.Errorf("err %v; want the history from http://%s:\n%s", err, host, out)
	}
	if gotUser.Load() != "scraper" || gotPassword.Load() != "hunter2" {
		t.Errorf("the exporter got basic auth %v:%v, want the URL's scraper:hunter2", gotUser.Load(), gotPassword.Load())
	}
	if strings.Contains(out+stderr, "hunter2") || strings.Contains(out+stderr, "scraper") {
		t.Errorf("the URL's user info was printed:\n%s%s", out, stderr)
	}

	for _, exp := range []string{
		"http://scraper:hunter2@127.0.0.1:1",               // unreachable
		"http://scraper:hunter2@" + host + "/missing",      // an error answer
		"ftp://scraper:hunter2@" + host,                    // not http(s)
		"scraper:hunter2@" + host,                          // no scheme: parses as scheme "scraper"
		"http://scraper:hunter2@[::1",                      // does not parse
		"http://scraper:hunt%ZZer2@" + host,                // a bad escape in the password
		"http://scraper:hunter2@" + host + "/\x7f/invalid", // a control in the path
	} {
		out, stderr, err := runWith(t, src, "describe", "kube-system/kube-scheduler", "--exporter", exp)
		if err == nil {
			t.Errorf("%q: no error", exp)
			continue
		}
		if all := out + stderr + explain(err); strings.Contains(all, "hunter2") || strings.Contains(all, "hunt%ZZer2") || strings.Contains(all, "scraper") {
			t.Errorf("%q: user info printed:\n%s", exp, all)
		}
	}
}
