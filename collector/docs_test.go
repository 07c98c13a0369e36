package collector_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/lease-exporter/lease-exporter/collector"
	"github.com/lease-exporter/lease-exporter/events"
	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/lock"
)

// TestDocsMatchExporter fails when docs/metrics.md and the exporter disagree on metric names:
// metrics are a public API, so every emitted name needs a "### name" section and vice versa.
func TestDocsMatchExporter(t *testing.T) {
	doc, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile(`(?m)^### ([a-z_:]+)$`).FindAllStringSubmatch(string(doc), -1) {
		documented = append(documented, m[1])
	}

	// The names the exporter can emit: the descriptors of every collector Build makes (with
	// --expect, which turns the last row on), plus the informer's self-metrics, registered
	// exactly as the command registers them.
	cs := collector.Build(nil, collector.Settings{Expected: []lock.Ref{{Namespace: "ns", Name: "l"}}})
	emitted := descNames(cs.Leases)
	for _, c := range cs.Registered {
		emitted = append(emitted, descNames(c)...)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(versioncollector.NewCollector("lease_exporter"))
	// Every lock kind: the parse error series exist only when an annotation lock kind is watched.
	opts := informer.Options{Locks: lock.Kinds[:]}
	registered := &recordingRegisterer{Registerer: reg}
	if _, err := informer.NewForClients(informer.Clients{}, opts, nil, registered); err != nil {
		t.Fatal(err)
	}
	// The class counters, which the command registers beside the informer's.
	collector.NewElections(registered, "")
	// The Events writer's (--events), registered as the command registers it.
	events.New(fake.NewClientset(), events.Options{}, nil, registered)
	emitted = append(emitted, gatheredNames(t, reg)...)
	// A vector gathers nothing before its first series (lock deletions, by namespace): its
	// descriptor names it.
	for _, c := range registered.collectors {
		emitted = append(emitted, descNames(c)...)
	}
	slices.Sort(emitted)
	emitted = slices.Compact(emitted)

	for _, name := range emitted {
		if !slices.Contains(documented, name) {
			t.Errorf("metric %s is exported but has no '### %s' section in docs/metrics.md", name, name)
		}
	}
	for _, name := range documented {
		if !slices.Contains(emitted, name) {
			t.Errorf("docs/metrics.md documents %s but the exporter does not export it", name)
		}
	}
	// The standard Go and process collectors are documented as a group, not name by name.
	if !strings.Contains(string(doc), "Go and process collectors") {
		t.Error("docs/metrics.md does not mention the Go and process collectors")
	}
}

// recordingRegisterer keeps what is registered through it.
type recordingRegisterer struct {
	prometheus.Registerer
	collectors []prometheus.Collector
}

func (r *recordingRegisterer) Register(c prometheus.Collector) error {
	r.collectors = append(r.collectors, c)
	return r.Registerer.Register(c)
}

func (r *recordingRegisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// descNames lists the names in c's descriptors: Describe must name everything Collect may emit.
func descNames(c prometheus.Collector) []string {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	var names []string
	for d := range ch {
		names = append(names, fqName.FindStringSubmatch(d.String())[1])
	}
	return names
}

func gatheredNames(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mf := range mfs {
		names = append(names, mf.GetName())
	}
	return names
}
