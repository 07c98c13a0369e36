package node

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
)

// kubeProxyConfig: iptables mode, as most clusters still run it. Every host-wide setting it
// would otherwise change is turned off: conntrack limits and timeouts (0 = leave as is),
// route_localnet (localhostNodePorts), and oomScoreAdj (lowering needs CAP_SYS_RESOURCE).
func kubeProxyConfig(kubeconfig string, healthz, metrics int) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: %q}
hostnameOverride: %s
healthzBindAddress: 127.0.0.1:%d
metricsBindAddress: 127.0.0.1:%d
clusterCIDR: %s
nodePortAddresses: ["%s/32"]
oomScoreAdj: 0
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
iptables:
  localhostNodePorts: false
  syncPeriod: 10s
  minSyncPeriod: 1s
`, kubeconfig, NodeName, healthz, metrics, PodCIDR, NodeIP)
}

func startKubeProxy(ctx context.Context, cp *controlplane.ControlPlane) (*controlplane.Process, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	healthz, metrics := ports[0], ports[1]
	// system:kube-proxy is what the bootstrap system:node-proxier binding names.
	kubeconfig, err := cp.KubeconfigForUser("system:kube-proxy")
	if err != nil {
		return nil, err
	}
	if err := writeFiles(map[string]string{workPath("kube-proxy.yaml"): kubeProxyConfig(kubeconfig, healthz, metrics)}); err != nil {
		return nil, err
	}
	p, err := controlplane.StartProcess("kube-proxy", filepath.Join(cp.AssetsDir(), "kube-proxy"), workPath("logs", "kube-proxy.log"),
		[]string{"--config=" + workPath("kube-proxy.yaml"), "--v=1"})
	if err != nil {
		return nil, err
	}
	url := "http://127.0.0.1:" + strconv.Itoa(healthz) + "/healthz"
	return p, waitFor(ctx, p, 2*time.Minute, httpOK(url))
}
