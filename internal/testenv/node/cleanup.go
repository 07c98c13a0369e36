package node

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Cleanup undoes everything a node changed on this host, whether the node stopped cleanly, its
// test failed, or its process was killed: it kills the node's processes (the kubelet,
// kube-proxy, containerd, its shims and every container), unmounts what lies under Workdir,
// deletes the bridge and its veths, removes the KUBE-* iptables chains and the cgroups under
// CgroupRoot, writes back the sysctls, removes the paths outside Workdir that the node made,
// and then Workdir. It does nothing when Workdir does not exist (no node ran, or it was
// cleaned), so it never touches a host the node did not change. logf reports each step taken.
func Cleanup(logf func(format string, args ...any)) error {
	if _, err := os.Stat(Workdir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var errs []error
	step := func(name string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	step("kill processes", killNodeProcesses(logf))
	step("unmount", unmountUnder(Workdir, logf))
	step("delete bridge", deleteBridge(logf))
	step("remove iptables chains", removeKubeChains(logf))
	step("remove cgroups", removeCgroups(logf))
	if b, err := readBefore(); err == nil {
		step("remove new nftables tables", removeNewTables(b.Tables, logf))
		step("restore host", restoreOutside(b))
	} else if !errors.Is(err, os.ErrNotExist) {
		step("read recorded host state", err)
	}
	if len(errs) == 0 {
		step("remove workdir", os.RemoveAll(Workdir))
	}
	return errors.Join(errs...)
}

// nodeProcesses lists the processes that belong to the node: those in its cgroups (every
// container) and those whose command line names Workdir (the kubelet, kube-proxy, containerd
// and the shims, which all get paths under it).
func nodeProcesses() []int {
	entries, _ := os.ReadDir("/proc")
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cg, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.Contains(cg, []byte("/"+CgroupRoot)) || bytes.Contains(cmd, []byte(Workdir)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func killNodeProcesses(logf func(string, ...any)) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		pids := nodeProcesses()
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes still alive after SIGKILL: %v", pids)
		}
		logf("node cleanup: killing %d processes %v", len(pids), pids)
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// mountsUnder lists mount points at or below dir, deepest first.
func mountsUnder(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMount(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, ...).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unmountUnder(dir string, logf func(string, ...any)) error {
	// The kubelet makes its root dir an rshared bind mount of itself, so one unmount can
	// reveal another at the same point: repeat until none is left.
	for range 10 {
		mps, err := mountsUnder(dir)
		if err != nil || len(mps) == 0 {
			return err
		}
		logf("node cleanup: unmounting %d mounts under %s", len(mps), dir)
		for _, mp := range mps {
			_ = syscall.Unmount(mp, syscall.MNT_DETACH)
		}
	}
	mps, _ := mountsUnder(dir)
	if len(mps) > 0 {
		return fmt.Errorf("still mounted: %v", mps)
	}
	return nil
}

// deleteBridge deletes the veths still enslaved to the bridge (their Pods' network
// namespaces are gone with the unmounts, so normally none is), then the bridge.
func deleteBridge(logf func(string, ...any)) error {
	if _, err := os.Stat(filepath.Join("/sys/class/net", Bridge)); err != nil {
		return nil
	}
	ports, _ := filepath.Glob(filepath.Join("/sys/class/net", Bridge, "brif", "*"))
	for _, p := range ports {
		_ = run("ip", "link", "del", filepath.Base(p))
	}
	logf("node cleanup: deleting bridge %s (%d ports left on it)", Bridge, len(ports))
	return run("ip", "link", "del", Bridge)
}

// removeCgroups removes CgroupRoot and everything below it in every hierarchy, deepest first.
func removeCgroups(logf func(string, ...any)) error {
	roots, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", CgroupRoot))
	if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", CgroupRoot)); err == nil {
		roots = append(roots, filepath.Join("/sys/fs/cgroup", CgroupRoot)) // cgroup v2
	}
	var errs []error
	for _, root := range roots {
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("rmdir %s: %w", d, err))
			}
		}
	}
	if len(roots) > 0 {
		logf("node cleanup: removed cgroup %s from %d hierarchies", CgroupRoot, len(roots))
	}
	return errors.Join(errs...)
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}
