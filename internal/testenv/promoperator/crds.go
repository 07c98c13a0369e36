package promoperator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// CRDs are the monitoring.coreos.com resources the operator's Prometheus controller watches:
// it waits for an informer on each before it reconciles anything, so all five must exist.
// Alertmanager, ThanosRuler, PrometheusAgent and ScrapeConfig are left out; the operator then
// starts without those controllers (it checks for each CRD).
var CRDs = []string{"prometheuses", "servicemonitors", "podmonitors", "probes", "prometheusrules"}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRDFile is where the operator build keeps a CRD, e.g. CRDFile(dir, "servicemonitors").
func CRDFile(opDir, plural string) string {
	return filepath.Join(opDir, "crds", "monitoring.coreos.com_"+plural+".yaml")
}

// installCRDs creates CRDs from the operator's own release (an existing one is left as it
// is) and waits until the API server serves each of them.
func installCRDs(ctx context.Context, dyn dynamic.Interface, opDir string) error {
	for _, plural := range CRDs {
		b, err := os.ReadFile(CRDFile(opDir, plural))
		if err != nil {
			return err
		}
		var obj map[string]any
		if err := yaml.Unmarshal(b, &obj); err != nil {
			return fmt.Errorf("decode %s CRD: %w", plural, err)
		}
		_, err = dyn.Resource(crdGVR).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %s CRD: %w", plural, err)
		}
	}
	for _, plural := range CRDs {
		if err := waitEstablished(ctx, dyn, plural+".monitoring.coreos.com"); err != nil {
			return err
		}
	}
	return nil
}

func waitEstablished(ctx context.Context, dyn dynamic.Interface, name string) error {
	deadline := time.Now().Add(time.Minute)
	for {
		crd, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
		if err == nil && established(crd) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("CRD %s not Established within a minute (last error: %v)", name, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
