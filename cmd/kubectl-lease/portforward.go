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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
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
	where := "service " + ref
	svc, err := client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return backend{}, &exporterError{where: where, err: err, fix: serviceFix(err, ns)}
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
		return backend{}, &exporterError{where: where, err: fmt.Errorf("the Service has no port %q", portName),
			fix: "name one of its ports: " + strings.Join(names, ", ")}
	}
	eps, err := client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
	if err != nil {
		return backend{}, &exporterError{where: where, err: err, fix: serviceFix(err, ns)}
	}
	for _, s := range eps.Items {
		for _, p := range s.Ports {
			if p.Port == nil || ptr.Deref(p.Name, "") != svc.Spec.Ports[port].Name {
				continue
			}
			for _, e := range s.Endpoints {
				// An unset condition means ready (discovery.k8s.io/v1).
				if e.TargetRef != nil && e.TargetRef.Kind == "Pod" && (e.Conditions.Ready == nil || *e.Conditions.Ready) {
					return backend{namespace: ns, pod: e.TargetRef.Name, port: *p.Port}, nil
				}
			}
		}
	}
	return backend{}, &exporterError{where: where, err: errors.New("the Service has no Ready Pod"),
		fix: "check the exporter's Pods: kubectl get pods -n " + ns + ", or give --exporter URL"}
}

// forward port-forwards a free local port to b, as kubectl port-forward does (WebSockets,
// falling back to SPDY), until stop is called; it returns the local port once it listens.
func forward(ctx context.Context, cfg *rest.Config, client kubernetes.Interface, b backend) (local uint16, stop func(), err error) {
	u := client.CoreV1().RESTClient().Post().Resource("pods").Namespace(b.namespace).Name(b.pod).SubResource("portforward").URL()
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return 0, nil, err
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	if ws, err := portforward.NewSPDYOverWebsocketDialer(u, cfg); err == nil {
		dialer = portforward.NewFallbackDialer(ws, dialer, func(err error) bool {
			return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
		})
	}
	stopCh, ready := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", b.port)}, stopCh, ready, io.Discard, io.Discard)
	if err != nil {
		return 0, nil, err
	}
	failed := make(chan error, 1)
	go func() { failed <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-failed:
		return 0, nil, err
	case <-ctx.Done():
		close(stopCh)
		return 0, nil, ctx.Err()
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) != 1 {
		close(stopCh)
		return 0, nil, fmt.Errorf("the port-forward listens on no port: %v", err)
	}
	return ports[0].Local, func() { close(stopCh) }, nil
}

// getThroughForward reads path from the exporter behind the Service ref through a
// port-forward to one of its Ready Pods.
func getThroughForward(ctx context.Context, src *source, ref, path, kind string) ([]byte, error) {
	b, err := serviceBackend(ctx, src.clients.List, ref)
	if err != nil {
		return nil, err
	}
	where := fmt.Sprintf("service %s (Pod %s)", ref, b.pod)
	if src.cfg == nil {
		return nil, &exporterError{where: where, err: errors.New("no client configuration to port-forward with"), fix: "give --exporter URL"}
	}
	local, stop, err := forward(ctx, src.cfg, src.clients.List, b)
	if err != nil {
		return nil, &exporterError{where: where, err: fmt.Errorf("port-forward: %w", err), fix: forwardFix(err, b.namespace)}
	}
	defer stop()
	body, err := getExporter(ctx, &url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", local)}, nil, path, kind)
	var ee *exporterError
	if errors.As(err, &ee) {
		ee.where = where
	}
	return body, err
}
