package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/lease-exporter/lease-exporter/lock"
)

// apiError is a list or watch of locks the API server refused or could not answer, with
// what was asked, so the one line printed names the fix: what to grant, what to check.
type apiError struct {
	verb      string
	kind      lock.Kind
	namespace string // "" for all
	err       error
}

func lockError(verb string, k lock.Kind, namespace string, err error) *apiError {
	return &apiError{verb: verb, kind: k, namespace: namespace, err: err}
}

func (e *apiError) Error() string { return e.what() + ": " + e.err.Error() }
func (e *apiError) Unwrap() error { return e.err }

// what names the request: "list configmaps in namespace kube-system".
func (e *apiError) what() string {
	where := "in all namespaces"
	if e.namespace != "" {
		where = "in namespace " + e.namespace
	}
	return e.verb + " " + e.kind.Resource() + " " + where
}

// explain is err as the one line printed after "error: ".
func explain(err error) string {
	var ae *apiError
	if !errors.As(err, &ae) {
		return err.Error()
	}
	status := ae.err.Error()
	if se := apierrors.APIStatus(nil); errors.As(ae.err, &se) {
		status = se.Status().Message
	}
	var ue *url.Error
	var ne net.Error
	switch {
	case apierrors.IsForbidden(ae.err):
		fix := fmt.Sprintf("ask for %q on %s (RBAC)", ae.verb, ae.kind.QualifiedResource())
		if ae.kind != lock.DefaultKind && ae.verb == "list" {
			fix += ", or leave " + ae.kind.String() + " locks out: --locks " + lock.DefaultKind.Resource()
		}
		return fmt.Sprintf("cannot %s: forbidden (%s); %s", ae.what(), status, fix)
	case apierrors.IsUnauthorized(ae.err):
		return fmt.Sprintf("cannot %s: the API server did not accept your credentials (%s); log in again or pick another --context", ae.what(), status)
	case apierrors.IsNotFound(ae.err):
		return fmt.Sprintf("cannot %s: the API server does not serve %s (%s); check --context, or leave that kind out with --locks", ae.what(), ae.kind.QualifiedResource(), status)
	case errors.As(ae.err, &ue) || errors.As(ae.err, &ne):
		return fmt.Sprintf("cannot %s: the API server cannot be reached (%v); check --context, --server and your network", ae.what(), ae.err)
	}
	return ae.Error()
}
