package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// --exporter-service forwards to a Ready Pod behind the Service, on the Pod's port for the
// Service port asked for (its first without one); a Service without a Ready Pod, or without
// the port, is an error naming what to do.
func TestExporterServiceResolvesAReadyPodAndItsPort(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "monitoring", Name: "lease-exporter"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http-metrics", Port: 8080}, {Name: "other", Port: 9000}}}}
	slice := func(name string, ready bool, pods ...string) *discoveryv1.EndpointSlice {
		s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "monitoring", Name: name,
			Labels: map[string]string{discoveryv1.LabelServiceName: "lease-exporter"}},
			Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http-metrics"), Port: ptr.To[int32](10047)}, {Name: ptr.To("other"), Port: ptr.To[int32](9001)}}}
		for _, p := range pods {
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)},
				TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: p}})
		}
		return s
	}
	client := fake.NewClientset(svc, slice("a", false, "starting"), slice("b", true, "exporter-0"))
	for _, tc := range []struct{ ref, want string }{
		{"monitoring/lease-exporter", "exporter-0:10047"},
		{"monitoring/lease-exporter:other", "exporter-0:9001"},
		{"monitoring/lease-exporter:9000", "exporter-0:9001"},
		{"monitoring/lease-exporter:web", `the Service has no port "web"; name one of its ports: http-metrics, other`},
		{"monitoring/nope", "services \"nope\" not found; check the Service's namespace and name"},
		{"lease-exporter", "malformed Service; give --exporter-service as NAMESPACE/NAME"},
	} {
		b, err := serviceBackend(context.Background(), client, tc.ref)
		got := fmt.Sprintf("%s:%d", b.pod, b.port)
		if err != nil {
			got = err.(*exporterError).err.Error() + "; " + err.(*exporterError).fix
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.ref, got, tc.want)
		}
	}
	notReady := fake.NewClientset(svc, slice("a", false, "starting"))
	if _, err := serviceBackend(context.Background(), notReady, "monitoring/lease-exporter"); err == nil || !strings.Contains(err.Error(), "the Service has no Ready Pod") {
		t.Errorf("a Service without a Ready Pod: %v", err)
	}
}
