package node

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
)

// kubeletConfig: cgroupfs on this cgroup v1 host (failCgroupV1: false lets 1.36 start on
// it), the cgroup root and every directory it can be given under Workdir, serving on NodeIP
// (the API server reaches it there for logs and exec), no eviction or image GC that a busy
// disk could trigger mid-test, and oomScoreAdj 0 (lowering it needs CAP_SYS_RESOURCE).
// Anonymous AlwaysAllow: the kubelet API is reachable only from this machine and its Pods.
func kubeletConfig(port, healthz int) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %s
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
cgroupDriver: cgroupfs
cgroupRoot: /%s
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
containerRuntimeEndpoint: unix://%s
podLogsDir: %s
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
evictionHard: {memory.available: "50Mi", nodefs.available: "1%%", imagefs.available: "1%%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
maxPods: 110
`, NodeIP, port, healthz, CgroupRoot, containerdSocket(), workPath("logs", "pods"))
}

func startKubelet(ctx context.Context, cp *controlplane.ControlPlane) (*controlplane.Process, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	port, healthz := ports[0], ports[1]
	// The kubelet's real identity: the Node authorizer and NodeRestriction apply as on a
	// kubeadm node.
	kubeconfig, err := cp.KubeconfigForUser("system:node:"+NodeName, "system:nodes")
	if err != nil {
		return nil, err
	}
	if err := makeCgroupRoot(); err != nil {
		return nil, err
	}
	if err := writeFiles(map[string]string{workPath("kubelet.yaml"): kubeletConfig(port, healthz)}); err != nil {
		return nil, err
	}
	p, err := controlplane.StartProcess("kubelet", filepath.Join(cp.AssetsDir(), "kubelet"), workPath("logs", "kubelet.log"), []string{
		"--config=" + workPath("kubelet.yaml"),
		"--kubeconfig=" + kubeconfig,
		"--root-dir=" + workPath("kubelet"),
		"--node-ip=" + NodeIP,
		"--hostname-override=" + NodeName,
		"--v=1",
	})
	if err != nil {
		return nil, err
	}
	url := "http://127.0.0.1:" + strconv.Itoa(healthz) + "/healthz"
	return p, waitFor(ctx, p, 2*time.Minute, httpOK(url))
}
