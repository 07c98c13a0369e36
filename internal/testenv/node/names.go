package node

import "path/filepath"

// Fixed names: Cleanup must find what a killed run created, so nothing here is random.
const (
	// Workdir holds containerd's root and state, the kubelet's root, CNI config and state,
	// configs and logs. Every mount the node makes lies under it.
	Workdir = "/var/lib/lease-exporter-node"
	// LockPath serialises node tests across processes (and CI clones) on one machine.
	LockPath = "/run/lease-exporter-node.lock"
	// Bridge is the CNI bridge; it carries NodeIP.
	Bridge = "lenode0"
	// CgroupRoot is the kubelet's --cgroup-root, made in every cgroup v1 hierarchy.
	CgroupRoot = "lease-exporter-node"
	// NodeName is the Node object's name (--hostname-override).
	NodeName = "lease-exporter-node"

	// PodCIDR and ServiceCIDR collide with none of this machine's routes (192.0.2.0/24 on
	// eth0 where this was written; Start checks `ip route` and refuses an overlap).
	PodCIDR = "10.244.0.0/24"
	// NodeIP is the bridge's address: the kubelet's InternalIP and the API server's
	// advertised address.
	NodeIP = "10.244.0.1"
	// ServiceCIDR is controlplane's --service-cluster-ip-range; the "kubernetes" Service is
	// its first address, which the API server's certificate names.
	ServiceCIDR = "10.0.0.0/24"

	// PauseImage is containerd's sandbox image, built locally (images.go).
	PauseImage = "registry.k8s.io/pause:3.10"
)

func workPath(elem ...string) string { return filepath.Join(append([]string{Workdir}, elem...)...) }
