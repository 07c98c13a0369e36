package node

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// HostState is what a node may change on this host, read so that a test can show that Stop
// (or the reaper, after a killed test) undid all of it.
type HostState struct {
	Mounts    []string // mount points
	Links     []string // network interfaces
	Netns     []string // named network namespaces
	IPTables  []string // iptables-save and ip6tables-save, without counters
	Cgroups   []string // top-level cgroups of every hierarchy
	Sysctls   []string // name=value of every sysctl the node may touch
	Paths     []string // the outside paths that exist
	Processes []int    // processes of the node (should be none)
}

// buildahStorage is buildah's (containers/storage's) own: the image builds of test/image and
// of the node tests mount and unmount its layers while they run, beside a node test and
// between its snapshots, and a node never mounts anything there (its containerd lives in
// Workdir). Its mounts are not the node's to undo.
const buildahStorage = "/var/lib/containers/storage/"

var counters = regexp.MustCompile(`\[\d+:\d+\]`)

// SnapshotHost reads the host's state.
func SnapshotHost() (HostState, error) {
	var h HostState
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return h, err
	}
	for _, line := range strings.Split(string(mi), "\n") {
		if f := strings.Fields(line); len(f) > 4 && !strings.HasPrefix(unescapeMount(f[4]), buildahStorage) {
			h.Mounts = append(h.Mounts, unescapeMount(f[4]))
		}
	}
	links, _ := os.ReadDir("/sys/class/net")
	for _, l := range links {
		h.Links = append(h.Links, l.Name())
	}
	ns, _ := os.ReadDir("/run/netns")
	for _, n := range ns {
		h.Netns = append(h.Netns, n.Name())
	}
	for _, save := range []string{"iptables-save", "ip6tables-save"} {
		out, err := exec.Command(save).Output()
		if err != nil {
			return h, fmt.Errorf("%s: %w", save, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if line != "" && !strings.HasPrefix(line, "#") {
				h.IPTables = append(h.IPTables, save+": "+counters.ReplaceAllString(line, ""))
			}
		}
	}
	cgroups, _ := filepath.Glob("/sys/fs/cgroup/*/*/")
	h.Cgroups = cgroups
	for _, s := range touchedSysctls {
		if v, err := os.ReadFile(filepath.Join("/proc/sys", s)); err == nil {
			h.Sysctls = append(h.Sysctls, s+"="+strings.TrimSpace(string(v)))
		}
	}
	for _, p := range append(outsidePaths, Workdir) {
		if _, err := os.Lstat(p); err == nil {
			h.Paths = append(h.Paths, p)
		}
	}
	h.Processes = nodeProcesses()
	return h, nil
}

// Diff lists what differs from before, one line per item added or removed.
func (h HostState) Diff(before HostState) []string {
	var out []string
	cmp := func(kind string, was, is []string) {
		for _, x := range is {
			if !slices.Contains(was, x) {
				out = append(out, fmt.Sprintf("%s added: %s", kind, x))
			}
		}
		for _, x := range was {
			if !slices.Contains(is, x) {
				out = append(out, fmt.Sprintf("%s removed: %s", kind, x))
			}
		}
	}
	cmp("mount", before.Mounts, h.Mounts)
	cmp("link", before.Links, h.Links)
	cmp("netns", before.Netns, h.Netns)
	cmp("iptables", before.IPTables, h.IPTables)
	cmp("cgroup", before.Cgroups, h.Cgroups)
	cmp("sysctl", before.Sysctls, h.Sysctls)
	cmp("path", before.Paths, h.Paths)
	if len(h.Processes) > 0 {
		out = append(out, fmt.Sprintf("node processes alive: %v", h.Processes))
	}
	return out
}
