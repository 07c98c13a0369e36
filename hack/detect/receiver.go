package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"
)

// receiver is the webhook Alertmanager delivers to: the pager. It records every alert of
// every delivery with the time it arrived, which is when an on-call would be paged.
type receiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []Notification
}

func newReceiver() *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.handle)) // loopback only
	return r
}

func (r *receiver) url() string { return r.srv.URL + "/alerts" }
func (r *receiver) close()      { r.srv.Close() }

func (r *receiver) handle(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(req.Body)
	var payload struct {
		Alerts []struct {
			Status string            `json:"status"`
			Labels map[string]string `json:"labels"`
		} `json:"alerts"`
	}
	if err == nil {
		err = json.Unmarshal(body, &payload)
	}
	if err != nil {
		// Alertmanager retries a failed delivery and logs the 400.
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range payload.Alerts {
		r.got = append(r.got, Notification{At: at, Status: a.Status, Alertname: a.Labels["alertname"],
			Set: a.Labels["set"], Labels: a.Labels})
	}
}

// all returns every notification so far, in arrival order.
func (r *receiver) all() []Notification {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}
