package controlplane

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
)

// AuditLeaseReads is an audit policy for Options.AuditPolicy that records every list and watch
// of Leases, with their query, so a test can tell from the API server's own record how a
// client read them: a streaming list (a watch with sendInitialEvents=true) or a LIST.
const AuditLeaseReads = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [list, watch]
  resources: [{group: coordination.k8s.io, resources: [leases]}]
- level: None
`

// AuditLeaseReadsAndWrites is AuditLeaseReads that also records every write to a Lease, so a
// test can count the writes the API server served (an elector's renewals) from its own record.
const AuditLeaseReadsAndWrites = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [list, watch, create, update, patch]
  resources: [{group: coordination.k8s.io, resources: [leases]}]
- level: None
`

// AuditEvent is the part of an audit.k8s.io/v1 Event that tests look at.
type AuditEvent struct {
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// Code is the response status code, 0 when the event has none.
func (e AuditEvent) Code() int {
	if e.ResponseStatus == nil {
		return 0
	}
	return e.ResponseStatus.Code
}

// Query is the request's query, e.g. Query().Get("sendInitialEvents").
func (e AuditEvent) Query() url.Values {
	u, err := url.Parse(e.RequestURI)
	if err != nil {
		return url.Values{}
	}
	return u.Query()
}

// auditArgs are the kube-apiserver flags that write the audit log, none without a policy.
func (cp *ControlPlane) auditArgs() ([]string, error) {
	if cp.opts.AuditPolicy == "" {
		return nil, nil
	}
	policy := filepath.Join(cp.dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(cp.opts.AuditPolicy), 0o600); err != nil {
		return nil, fmt.Errorf("write audit policy: %w", err)
	}
	return []string{
		"--audit-policy-file=" + policy,
		"--audit-log-path=" + cp.AuditLogPath(),
		"--audit-log-format=json",
	}, nil
}

// AuditLogPath is the API server's audit log (JSON lines); it exists only with an AuditPolicy.
func (cp *ControlPlane) AuditLogPath() string { return filepath.Join(cp.dir, "logs", "audit.log") }

// AuditEvents reads the audit log so far. The API server writes each event as one line, so a
// partly written last line can only be the one being written: it is skipped.
func (cp *ControlPlane) AuditEvents() ([]AuditEvent, error) {
	if cp.opts.AuditPolicy == "" {
		return nil, fmt.Errorf("no audit log: the control plane was started without Options.AuditPolicy")
	}
	f, err := os.Open(cp.AuditLogPath())
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	defer f.Close()
	var events []AuditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		var e AuditEvent
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			events = append(events, e)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	return events, nil
}

// Writes counts the successful creates and updates of the Lease namespace/name in events.
func Writes(events []AuditEvent, namespace, name string) (creates, updates int) {
	for _, e := range events {
		if e.Stage != "ResponseComplete" || e.ObjectRef == nil || e.ObjectRef.Namespace != namespace || e.ObjectRef.Name != name {
			continue
		}
		switch {
		case e.Verb == "create" && e.Code() == 201:
			creates++
		case e.Verb == "update" && e.Code() == 200:
			updates++
		}
	}
	return creates, updates
}
