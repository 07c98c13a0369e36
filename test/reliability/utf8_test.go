package reliability_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
	"unicode/utf8"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
)

// TestInvalidUTF8Holder writes a holder identity that is not UTF-8 through the real API server.
// JSON clients cannot (encoding/json replaces invalid bytes), but a protobuf client can, the API
// server does not validate the field, and the exporter reads protobuf. Prometheus label values
// must be UTF-8: one such Lease used to abort the rest of the scrape (client_golang panics on
// it) or make the whole text exposition unparsable (the fast writer copies bytes).
func TestInvalidUTF8Holder(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "bad-utf8")
	cfg := env.CP.Config()
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	holder := "pod-\xff\xfe-\xc3"
	now := metav1.NewMicroTime(metav1.Now().Time)
	duration := int32(3600)
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad-holder"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, RenewTime: &now, LeaseDurationSeconds: &duration}}
	if _, err := client.CoordinationV1().Leases(ns).Create(ctx, l, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create lease with invalid UTF-8 holder: %v", err)
	}
	stored, err := client.CoordinationV1().Leases(ns).Get(ctx, "bad-holder", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := *stored.Spec.HolderIdentity; got != holder {
		t.Logf("the API server changed the holder to %q: nothing invalid reaches the exporter", got)
	} else {
		t.Logf("the API server stored the invalid UTF-8 holder %q as is", got)
	}
	// Leases named around it, so a scrape cut short at the bad one would lose some.
	for i := range 5 {
		createLease(t, ns, fmt.Sprintf("a-%d", i), "pod-a", 3600)
		createLease(t, ns, fmt.Sprintf("z-%d", i), "pod-z", 3600)
	}
	exp := env.StartReady(t, env.Bin, "--namespaces="+ns)
	var want []string
	for i := range 5 {
		want = append(want, fmt.Sprintf("a-%d", i), fmt.Sprintf("z-%d", i))
	}
	want = append(want, "bad-holder")
	// exporterproc.Scrape parses with UTF-8 validation, as Prometheus does.
	waitFor(t, exp, "every Lease exported with valid UTF-8", func(s *exporterproc.Scrape) bool {
		return checkExactlyOnce(s, ns, want...) == nil
	})
	for _, format := range []string{"text", "protobuf"} {
		s := scrape(t, exp)
		if format == "protobuf" {
			// The client_golang path serves protobuf; it used to panic on this Lease.
			if s, err = scrapeProtobuf(exp); err != nil {
				t.Fatal(err)
			}
		}
		info := s.Series("lease_info", map[string]string{"namespace": ns, "lease": "bad-holder"})
		if len(info) != 1 || !utf8.ValidString(info[0].Labels["holder"]) || info[0].Labels["holder"] != "pod-\uFFFD-\uFFFD" {
			t.Errorf("%s: lease_info for the invalid holder: %+v, want holder %q", format, info, "pod-\uFFFD-\uFFFD")
		}
		if err := checkExactlyOnce(s, ns, want...); err != nil {
			t.Errorf("%s: %v", format, err)
		}
	}
}

// scrapeProtobuf scrapes /metrics in the delimited protobuf format, which the exporter serves
// through client_golang rather than its fast text writer.
func scrapeProtobuf(exp *exporterproc.Exporter) (*exporterproc.Scrape, error) {
	req, err := http.NewRequest(http.MethodGet, exp.URL()+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	format := expfmt.NewFormat(expfmt.TypeProtoDelim)
	req.Header.Set("Accept", string(format))
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("protobuf scrape: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("protobuf scrape: %s", resp.Status)
	}
	if got := expfmt.ResponseFormat(resp.Header); got.FormatType() != expfmt.TypeProtoDelim {
		return nil, fmt.Errorf("protobuf scrape answered %q", got)
	}
	s := &exporterproc.Scrape{Families: map[string]*dto.MetricFamily{}}
	dec := expfmt.NewDecoder(resp.Body, format)
	for {
		mf := &dto.MetricFamily{}
		if err := dec.Decode(mf); err == io.EOF {
			return s, nil
		} else if err != nil {
			return nil, fmt.Errorf("decode protobuf scrape: %w", err)
		}
		s.Families[mf.GetName()] = mf
	}
}
