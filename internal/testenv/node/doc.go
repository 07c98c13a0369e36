// Package node runs a real one-node Kubernetes cluster on this machine for the tests that
// install what users install: the control plane of package controlplane plus a kubelet,
// containerd, runc, the CNI bridge plugin and kube-proxy in iptables mode, all real binaries.
// Pods run real images imported into containerd (no registry is reachable here).
//
// It changes host state (a bridge, veths and network namespaces, iptables chains, cgroups,
// mounts, a few sysctls the kubelet and kube-proxy set), so:
//   - every name it creates is fixed (Workdir, Bridge, CgroupRoot), so that Cleanup can find
//     and undo what a killed run left behind; Start runs Cleanup first;
//   - a reaper process outlives the test and runs Cleanup when the test process dies, however
//     it dies (see reaper.go);
//   - one node runs at a time on a machine, guarded by an exclusive lock (LockPath).
//
// Networking (docs/deploy.md, "Proven on a real node"): Pods get addresses in PodCIDR on the
// bridge, which holds NodeIP; Services get ClusterIPs in controlplane's ServiceCIDR. Pods have
// routes only to those two ranges, the bridge plugin runs without isGateway and ipMasq, and
// net.ipv4.ip_forward stays 0, so no packet of a Pod can leave this machine. The API server
// still listens on loopback only: a forwarder in the test process accepts on NodeIP (the
// "kubernetes" Service's endpoint) and dials loopback.
package node
