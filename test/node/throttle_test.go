//go:build release

package node_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/promstack"
)

const (
	// throttleName names the FlowSchema and PriorityLevelConfiguration that throttle the
	// exporter's ServiceAccount.
	throttleName = "lease-exporter-throttled"
	// throttleWindow is how long the restarted Pod runs throttled.
	throttleWindow = 90 * time.Second
	// maxThrottledRate bounds the exporter's requests while every one is rejected: client-go
	// waits out each 429's Retry-After and its reflector backs off exponentially (0.8 s to
	// 30 s), so a throttled exporter asks about once a second at most. A client that
	// retried at once would be held only by its own rate limiter (5 per second).
	maxThrottledRate = 1.5
	// maxListRate bounds the list and watch requests alone, as the exporter counts their 429s
	// (lease_exporter_watch_errors_total{reason="throttled"}, one per answer): the start-up
	// checks, which ask once a second for --kube.reach-timeout, are not among them, so a
	// reflector retrying without backoff would stand out even beside them.
	maxListRate = 1.0
)

// throttledByAPF puts the exporter's ServiceAccount in a priority level of one nominal share
// (3 seats on this API server; nothing lent or borrowed; excess rejected, not queued) and
// keeps the level full: a "hog" user in the same level holds every seat with requests that an
// admission webhook of the test's keeps waiting 20 s (APF dispatches a request whenever a seat
// is free, even a zero-seat level's when nothing else runs, so only a full level rejects).
// Then the API server answers the exporter's requests with 429. The test restarts the Pod
// under it and relaxes the level after throttleWindow. Judged as an operator would: the new Pod never Ready, /readyz naming the
// throttling, no Lease series served as synced, the exporter's requests counted by the API
// server's own APF metrics, and once relaxed the Pod synced and Ready without a restart.
func throttledByAPF(t *testing.T, c *cluster, prom *promstack.Process) {
	ctx := context.Background()
	old, _ := readyExporter(t, c)
	fc := c.client.FlowcontrolV1()
	level := &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: throttleName},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](1), LendablePercent: ptr.To[int32](0), BorrowingLimitPercent: ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
			},
		},
	}
	schema := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: throttleName},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: throttleName},
			MatchingPrecedence:         10, // before every suggested schema but exempt and probes
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindServiceAccount,
					ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: releaseNS, Name: old.Spec.ServiceAccountName}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
					ClusterScope: true, Namespaces: []string{"*"}}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
			}},
		},
	}
	if _, err := fc.PriorityLevelConfigurations().Create(ctx, level, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = fc.PriorityLevelConfigurations().Delete(ctx, throttleName, metav1.DeleteOptions{}) }()
	if _, err := fc.FlowSchemas().Create(ctx, schema, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = fc.FlowSchemas().Delete(ctx, throttleName, metav1.DeleteOptions{}) }()
	// The hog has a FlowSchema of its own into the same level, so that the API server's
	// counts by FlowSchema tell the exporter's requests from the hog's.
	hogSchema := schema.DeepCopy()
	hogSchema.Name = hogUser
	hogSchema.Spec.Rules[0].Subjects = []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: hogUser}}}
	if _, err := fc.FlowSchemas().Create(ctx, hogSchema, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = fc.FlowSchemas().Delete(ctx, hogUser, metav1.DeleteOptions{}) }()
	// The API server's APF controller takes the new configuration in within a moment; it is
	// in force once the level has a seat limit in the metrics.
	seats := waitAPIServerMetric(t, c, `apiserver_flowcontrol_current_limit_seats{priority_level="`+throttleName+`"}`)
	stopHog := startHog(t, c, int(seats))
	defer stopHog()

	before := apfRequests(t, c)
	if err := c.client.CoreV1().Pods(releaseNS).Delete(ctx, old.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := waitReplacementRunning(t, c, old.Name)
	url := fmt.Sprintf("http://%s:10047/metrics", pod.Status.PodIP)
	readyz := strings.TrimSuffix(url, "/metrics") + "/readyz"
	start, scrapes, readyzBody, listRejected := time.Now(), 0, "", 0.0
	for time.Since(start) < throttleWindow {
		if podIsReady(t, c, pod.Name) {
			t.Errorf("the Pod became Ready %s into the throttling, with nothing listed", time.Since(start).Round(time.Second))
			break
		}
		if s, err := exporterproc.ScrapeURL(url); err == nil {
			scrapes++
			listRejected = max(listRejected, metricValue(s, `lease_exporter_watch_errors_total{`, `reason="throttled"`))
			if !strings.Contains(s.Text, "\nlease_exporter_cache_synced 0\n") || strings.Contains(s.Text, "\nlease_held{") {
				t.Errorf("throttled, the exporter served Lease state as synced:\n%s", grepLines(s.Text, "lease_"))
				break
			}
		}
		if code, body := httpGetBody(readyz); code == 503 {
			readyzBody = body
		}
		time.Sleep(time.Second)
	}
	throttled := apfRequests(t, c)
	rejected := throttled.rejected - before.rejected
	rate := rejected / time.Since(start).Seconds()
	if scrapes == 0 {
		t.Errorf("the throttled exporter served no /metrics in %s", throttleWindow)
	}
	if !strings.Contains(readyzBody, "throttled") {
		t.Errorf("/readyz while throttled said %q, want 503 naming the throttling", readyzBody)
	}
	if rejected == 0 {
		t.Errorf("the API server rejected none of the exporter's requests: the FlowSchema did not apply")
	}
	if r := listRejected / time.Since(start).Seconds(); r > maxListRate {
		t.Errorf("the throttled exporter's lists and watches were rejected %.0f times in %s (%.2f/s), want at most %.1f/s: a retry storm", listRejected, throttleWindow, r, maxListRate)
	}
	if rate > maxThrottledRate {
		t.Errorf("the throttled exporter made %.0f requests in %s (%.2f/s), want at most %.1f/s: a retry storm", rejected, throttleWindow, rate, maxThrottledRate)
	}

	relaxed := time.Now()
	level, err := fc.PriorityLevelConfigurations().Get(ctx, throttleName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Relaxed, with the hog still holding its seats: 20 shares are about 45 seats here.
	level.Spec.Limited.NominalConcurrencyShares, level.Spec.Limited.BorrowingLimitPercent = ptr.To[int32](20), nil
	if _, err := fc.PriorityLevelConfigurations().Update(ctx, level, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for !podIsReady(t, c, pod.Name) {
		if time.Since(relaxed) > 3*time.Minute {
			t.Fatalf("the Pod was not Ready 3 minutes after the level was relaxed; /readyz: %q", readyzBody)
		}
		time.Sleep(250 * time.Millisecond)
	}
	readyAfter := time.Since(relaxed)
	s := waitMetric(t, url, `lease_held{class="leader-election",kind="Lease",lease="faults-elector",namespace="faults"} 1`, time.Minute)
	if !strings.Contains(s.Text, "\nlease_exporter_cache_synced 1\n") {
		t.Errorf("Ready but not synced:\n%s", grepLines(s.Text, "cache_synced"))
	}
	if errs := metricValue(s, `lease_exporter_watch_errors_total{`, `reason="throttled"`); errs <= 0 {
		t.Errorf("lease_exporter_watch_errors_total{reason=\"throttled\"} = %v after %0.f rejected requests", errs, rejected)
	}
	checkPodUnbroken(t, c, pod)
	checkNoFalsePage(t, prom, 10*time.Minute)
	t.Logf("throttled by APF for %s after a Pod restart: %.0f requests rejected (%.2f/s; the exporter counted %.0f as throttled), never Ready, /readyz %q; Ready %s after the level was relaxed",
		throttleWindow, rejected, rate, metricValue(s, `lease_exporter_watch_errors_total{`, `reason="throttled"`), readyzBody, readyAfter.Round(100*time.Millisecond))
}

// apfCounts are the API server's APF counters for throttleName's FlowSchema.
type apfCounts struct{ rejected, dispatched float64 }

// apfRequests reads the API server's /metrics: requests of throttleName's FlowSchema that APF
// rejected and dispatched, over every reason.
func apfRequests(t *testing.T, c *cluster) apfCounts {
	t.Helper()
	text := apiServerMetrics(t, c)
	var n apfCounts
	for _, l := range strings.Split(text, "\n") {
		if !strings.Contains(l, `flow_schema="`+throttleName+`"`) {
			continue
		}
		f := strings.Fields(l)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			continue
		}
		switch {
		case strings.HasPrefix(l, "apiserver_flowcontrol_rejected_requests_total{"):
			n.rejected += v
		case strings.HasPrefix(l, "apiserver_flowcontrol_dispatched_requests_total{"):
			n.dispatched += v
		}
	}
	return n
}

func apiServerMetrics(t *testing.T, c *cluster) string {
	t.Helper()
	b, err := c.client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitAPIServerMetric waits up to a minute for the series prefix (name and labels) in the
// API server's /metrics, and returns its value.
func waitAPIServerMetric(t *testing.T, c *cluster, prefix string) float64 {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		for _, l := range strings.Split(apiServerMetrics(t, c), "\n") {
			if v, ok := strings.CutPrefix(l, prefix+" "); ok {
				f, err := strconv.ParseFloat(v, 64)
				if err == nil {
					return f
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API server's metrics never showed %s", prefix)
		}
		time.Sleep(time.Second)
	}
}

// waitReplacementRunning waits for the exporter Pod that replaced old to run with an IP.
func waitReplacementRunning(t *testing.T, c *cluster, old string) corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		pods, err := c.client.CoreV1().Pods(releaseNS).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			if p.Name != old && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Pod replaced %s within 2 minutes", old)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

const (
	// hogUser fills the throttled level; hogNS is where its held requests go.
	hogUser = "throttle-hog"
	hogNS   = "throttle-hog"
	// hogHold is how long the webhook holds each of the hog's requests (its timeout is 25 s).
	hogHold = 20 * time.Second
)

// startHog fills the throttled level's seats: seats+2 loops of hogUser (impersonated by the
// admin client) each ask for a dry-run ConfigMap create in hogNS, which a validating webhook
// served by the test on the host's loopback holds for hogHold. The two loops more than the
// seats retry a rejected request every 10 ms, so a freed seat is taken again at once. The
// returned func stops the loops, releases the held requests and deletes what it made.
func startHog(t *testing.T, c *cluster, seats int) func() {
	t.Helper()
	ctx := context.Background()
	createNamespace(t, c.client, hogNS)
	if _, err := c.client.RbacV1().Roles(hogNS).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: hogUser},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.client.RbacV1().RoleBindings(hogNS).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: hogUser},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: hogUser},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: hogUser}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	webhook := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "want an AdmissionReview", http.StatusBadRequest)
			return
		}
		select {
		case <-time.After(hogHold):
		case <-release:
		}
		review.Response, review.Request = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}, nil
		_ = json.NewEncoder(w).Encode(review)
	}))
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: webhook.Certificate().Raw})
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: hogUser},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         "hold.throttle-hog.lease-exporter.test",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(webhook.URL + "/hold"), CABundle: ca},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"},
					Scope: ptr.To(admissionregistrationv1.NamespacedScope)}}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: hogNS}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](25),
		}},
	}
	if _, err := c.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{}); err != nil {
		webhook.Close()
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(c.n.ControlPlane().Config())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: hogUser}
	cfg.QPS, cfg.Burst = -1, 0
	hog := kubernetes.NewForConfigOrDie(cfg)
	hogCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range seats + 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for hogCtx.Err() == nil {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "hog-"}}
				err := hog.CoreV1().RESTClient().Post().Namespace(hogNS).Resource("configmaps").Param("dryRun", "All").
					Body(cm).MaxRetries(0).Do(hogCtx).Error()
				if apierrors.IsTooManyRequests(err) || err != nil && hogCtx.Err() == nil {
					time.Sleep(10 * time.Millisecond)
				}
			}
		}()
	}
	return func() {
		stop()
		close(release)
		wg.Wait()
		webhook.Close()
		_ = c.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, hogUser, metav1.DeleteOptions{})
		_ = c.client.CoreV1().Namespaces().Delete(ctx, hogNS, metav1.DeleteOptions{})
	}
}
