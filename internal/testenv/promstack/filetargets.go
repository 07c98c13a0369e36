package promstack

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
)

// FileTargets is a file Prometheus discovers one job's targets from (file_sd), each with
// its own target labels, as a PodMonitor scrapes Pods: a file rather than static targets, so
// that targets come and go while Prometheus runs. Its methods are safe for concurrent use.
type FileTargets struct {
	path string
	mu   sync.Mutex
	set  map[string]map[string]string
}

// NewFileTargets writes an empty target list to path.
func NewFileTargets(path string) (*FileTargets, error) {
	t := &FileTargets{path: path, set: map[string]map[string]string{}}
	return t, t.write()
}

// ScrapeConfig is the job, for PrometheusOptions.ScrapeConfigs; Prometheus rereads the file
// within a second of a change.
func (t *FileTargets) ScrapeConfig(job string) string {
	return fmt.Sprintf("  - job_name: %s\n    file_sd_configs: [{files: [%q], refresh_interval: 1s}]\n", job, t.path)
}

// Set makes addr (host:port) a target with labels; nil labels remove it, as a Pod's
// deletion takes it out of discovery.
func (t *FileTargets) Set(addr string, labels map[string]string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if labels == nil {
		delete(t.set, addr)
	} else {
		t.set[addr] = labels
	}
	return t.write()
}

// write replaces the file in one rename, so Prometheus never reads half of it.
func (t *FileTargets) write() error {
	type group struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	groups := []group{}
	for addr, labels := range t.set {
		groups = append(groups, group{[]string{addr}, labels})
	}
	b, err := json.Marshal(groups)
	if err != nil {
		return err
	}
	if err := os.WriteFile(t.path+".tmp", b, 0o644); err != nil {
		return err
	}
	return os.Rename(t.path+".tmp", t.path)
}
