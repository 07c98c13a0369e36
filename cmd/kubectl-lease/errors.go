package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/lease-exporter/lease-exporter/lock"
)

// apiError is a request to the API server that failed, with what it asked for, so the one
// line the user reads names the fix: the verb and resource to be granted, the context to
// check.
type apiError struct {
	verb, resource, group string
	namespace, name       string
	// lockKind is set for a lock kind other than Lease, which --locks can leave out.
	lockKind string
	err      error
}

// lockError is a failed request for locks of kind k.
func lockError(verb string, k lock.Kind, namespace, name string, err error) *apiError {
	e := &apiError{verb: verb, resource: k.Resource(), group: k.GVR().Group, namespace: namespace, name: name, err: err}
	if k != lock.DefaultKind {
		e.lockKind = k.String()
	}
	return e
}

func (e *apiError) Error() string { return e.what() + ": " + e.err.Error() }
func (e *apiError) Unwrap() error { return e.err }

// what names the request: "list configmaps in namespace kube-system".
func (e *apiError) what() string {
	s := e.verb + " " + e.resource
	if e.name != "" {
		s += " " + e.name
	}
	if e.namespace == "" {
		return s + " in all namespaces"
	}
	return s + " in namespace " + e.namespace
}

// qualified is the resource as RBAC names it: leases.coordination.k8s.io, configmaps.
func (e *apiError) qualified() string {
	if e.group == "" {
		return e.resource
	}
	return e.resource + "." + e.group
}

// explain turns err into the one line printed after "error: ".
func explain(err error) string {
	var ae *apiError
	if !errors.As(err, &ae) {
		return err.Error()
	}
	status := ae.err.Error()
	var se apierrors.APIStatus
	if errors.As(ae.err, &se) {
		status = se.Status().Message
	}
	switch {
	case apierrors.IsForbidden(ae.err):
		fix := fmt.Sprintf("ask for %q on %s (RBAC)", ae.verb, ae.qualified())
		if ae.lockKind != "" && ae.verb == "list" {
			fix += ", or leave " + ae.lockKind + " locks out: --locks " + lock.DefaultKind.Resource()
		}
		return fmt.Sprintf("cannot %s: forbidden (%s); %s", ae.what(), status, fix)
	case apierrors.IsUnauthorized(ae.err):
		return fmt.Sprintf("cannot %s: the API server did not accept your credentials (%s); log in again or pick another --context", ae.what(), status)
	case apierrors.IsNotFound(ae.err) && ae.name == "":
		return fmt.Sprintf("cannot %s: the API server does not serve %s (%s); check --context, or leave that kind out with --locks", ae.what(), ae.qualified(), status)
	case apierrors.IsNotFound(ae.err):
		return fmt.Sprintf("%s %q not found in namespace %q: check the name and -n", ae.resource, ae.name, ae.namespace)
	}
	var ue *url.Error
	var ne net.Error
	if errors.As(ae.err, &ue) || errors.As(ae.err, &ne) {
		return fmt.Sprintf("cannot %s: the API server cannot be reached (%v); check --context, --server and your network", ae.what(), ae.err)
	}
	return ae.Error()
}
