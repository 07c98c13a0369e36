package collector

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/lease-exporter/lease-exporter/lock"
)

// benchView holds n projected Leases: 90% node heartbeats, 10% leader elections.
func benchView(n int) staticView {
	v := staticView{synced: true, asOf: scrapeTime}
	for i := range n {
		var l *coordinationv1.Lease
		if i%10 == 0 {
			l = lease(fmt.Sprintf("team-%d", i%97), fmt.Sprintf("controller-%d", i), held(fmt.Sprintf("controller-%d-7d9f8b6c4-x2k9q_0b5e8a52", i), 2*time.Second, 15), transitions(3))
		} else {
			name := fmt.Sprintf("ip-10-%d-%d-%d.eu-west-1.compute.internal", i/65536%256, i/256%256, i%256)
			l = lease("kube-node-lease", name, held(name, 5*time.Second, 40))
		}
		v.leases = append(v.leases, lock.Project(l))
	}
	return v
}

// BenchmarkRegistered is what a scrape costs beside the per-lock series: gathering the
// registered collectors of Build's table (status, class summary, candidates) over a 90/10
// view.
func BenchmarkRegistered(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			reg := prometheus.NewRegistry()
			reg.MustRegister(Build(benchView(n), Settings{Now: func() time.Time { return scrapeTime }}).Registered...)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := reg.Gather(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGatherText is the render path through client_golang: Gather and text encoding.
func BenchmarkGatherText(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			reg := prometheus.NewRegistry()
			reg.MustRegister(New(benchView(n), Settings{Now: func() time.Time { return scrapeTime }}))
			b.ReportAllocs()
			for b.Loop() {
				mfs, err := reg.Gather()
				if err != nil {
					b.Fatal(err)
				}
				enc := expfmt.NewEncoder(io.Discard, expfmt.NewFormat(expfmt.TypeTextPlain))
				for _, mf := range mfs {
					if err := enc.Encode(mf); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/lease")
		})
	}
}
