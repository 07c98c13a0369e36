package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/utils/ptr"
)

// --exporter-service reaches the exporter as kubectl port-forward svc/... does: the Service
// names a Ready Pod (through its EndpointSlices) and the kubelet forwards a local port into
// that Pod. The connection starts inside the Pod, so the shipped NetworkPolicy, which admits
// only Prometheus, does not stand in the way, as it does for the API server's service proxy.

// backend is the Pod, and its port, that a port-forward to a Service reaches.
type backend struct {
	namespace, pod string
	port           int32
}

// serviceBackend resolves ref, NAMESPACE/NAME[:PORT] (a port's name or number; without one,
// the Service's first), to a Ready Pod behind the Service and the Pod's port for it.
func serviceBackend(ctx context.Context, client kubernetes.Interface, ref string) (backend, error) {
	ns, name, ok := strings.Cut(ref, "/")
	name, portName, _ := strings.Cut(name, ":")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return backend{}, &exporterError{where: ref, err: errors.New("malformed Service"), fix: "give --exporter-service as NAMESPACE/NAME or NAMESPACE/NAME:PORT"}
	}
	fail := func(err error, fix string) (backend, error) {
		return backend{}, &exporterError{where: "service " + ref, err: err, fix: cmp.Or(fix, serviceFix(err, ns))}
	}
	svc, err := client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fail(err, "")
	}
	var names []string
	port := -1
	for i, p := range svc.Spec.Ports {
		names = append(names, cmp.Or(p.Name, strconv.Itoa(int(p.Port))))
		if port < 0 && (portName == "" || portName == p.Name || portName == strconv.Itoa(int(p.Port))) {
			port = i
		}
	}
	if port < 0 {
		return fail(fmt.Errorf("the Service has no port %q", portName), "name one of its ports: "+strings.Join(names, ", "))
	}
	eps, err := client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
	if err != nil {
		return fail(err, "")
	}
	for _, s := range eps.Items {
		for _, p := range s.Ports {
			for _, e := range s.Endpoints {
				// An unset condition means ready (discovery.k8s.io/v1).
				if p.Port != nil && ptr.Deref(p.Name, "") == svc.Spec.Ports[port].Name && e.TargetRef != nil &&
					e.TargetRef.Kind == "Pod" && ptr.Deref(e.Conditions.Ready, true) {
					return backend{namespace: ns, pod: e.TargetRef.Name, port: *p.Port}, nil
				}
			}
		}
	}
	return fail(errors.New("the Service has no Ready Pod"), "check the exporter's Pods: kubectl get pods -n "+ns+", or give --exporter URL")
}

// getThroughForward reads path from the exporter behind the Service ref through a
// port-forward, as kubectl port-forward makes one (WebSockets, falling back to SPDY), from a
// free local port to one of its Ready Pods.
func getThroughForward(ctx context.Context, src *source, ref, path, kind string) ([]byte, error) {
	b, err := serviceBackend(ctx, src.clients.List, ref)
	if err != nil {
		return nil, err
	}
	where := fmt.Sprintf("service %s (Pod %s)", ref, b.pod)
	if src.cfg == nil {
		return nil, &exporterError{where: where, err: errors.New("no client configuration to port-forward with"), fix: "give --exporter URL"}
	}
	fail := func(err error) ([]byte, error) {
		fix := "check that the exporter's Pod runs (kubectl get pods -n " + b.namespace + "), or give --exporter URL"
		if apierrors.IsForbidden(err) {
			fix = serviceFix(err, b.namespace)
		}
		return nil, &exporterError{where: where, err: fmt.Errorf("port-forward: %w", err), fix: fix}
	}
	u := src.clients.List.CoreV1().RESTClient().Post().Resource("pods").Namespace(b.namespace).Name(b.pod).SubResource("portforward").URL()
	transport, upgrader, err := spdy.RoundTripperFor(src.cfg)
	if err != nil {
		return fail(err)
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	if ws, err := portforward.NewSPDYOverWebsocketDialer(u, src.cfg); err == nil {
		dialer = portforward.NewFallbackDialer(ws, dialer, func(err error) bool {
			return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
		})
	}
	stop, ready, failed := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	defer close(stop)
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", b.port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return fail(err)
	}
	go func() { failed <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-failed:
		return fail(err)
	case <-ctx.Done():
		return fail(ctx.Err())
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) != 1 {
		return fail(fmt.Errorf("the port-forward listens on no port: %v", err))
	}
	body, err := getExporter(ctx, &url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[0].Local)}, nil, path, kind)
	if ee := (*exporterError)(nil); errors.As(err, &ee) {
		ee.where = where
	}
	return body, err
}
