package node

import (
	"bufio"
	"fmt"
	"os/exec"
	"slices"
	"strings"
)

// kubeChainPrefix names every chain kube-proxy and the kubelet create (KUBE-SERVICES,
// KUBE-SVC-..., KUBE-KUBELET-CANARY, ...). Cleanup only runs on a host where a node of this
// package ran (Workdir exists), and Start refuses a host that already had such chains, so
// every chain with this prefix is the node's.
const kubeChainPrefix = "KUBE-"

var iptablesTables = []string{"filter", "nat", "mangle", "raw"}

// kubeChains returns, per table, the KUBE-* chains and the rules of built-in chains that
// jump to them, as iptables-save prints them.
func kubeChains(save string) (tables map[string][]string, jumps map[string][]string, err error) {
	tables, jumps = map[string][]string{}, map[string][]string{}
	out, err := exec.Command(save).Output()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", save, err)
	}
	table := ""
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "*"):
			table = line[1:]
		case strings.HasPrefix(line, ":"+kubeChainPrefix):
			tables[table] = append(tables[table], strings.Fields(line[1:])[0])
		case strings.HasPrefix(line, "-A ") && !strings.HasPrefix(line, "-A "+kubeChainPrefix) &&
			strings.Contains(line, "-j "+kubeChainPrefix):
			jumps[table] = append(jumps[table], "-D "+line[3:])
		}
	}
	return tables, jumps, sc.Err()
}

// removeKubeChains deletes the jumps into KUBE-* chains, then flushes and deletes the chains,
// for IPv4 and IPv6, in one iptables-restore --noflush per family.
func removeKubeChains(logf func(string, ...any)) error {
	for _, fam := range []string{"iptables", "ip6tables"} {
		if _, err := exec.LookPath(fam + "-save"); err != nil {
			continue
		}
		chains, jumps, err := kubeChains(fam + "-save")
		if err != nil {
			return err
		}
		var script strings.Builder
		n := 0
		for _, t := range iptablesTables {
			if len(chains[t]) == 0 && len(jumps[t]) == 0 {
				continue
			}
			fmt.Fprintf(&script, "*%s\n", t)
			for _, j := range jumps[t] {
				script.WriteString(j + "\n")
			}
			for _, c := range chains[t] {
				fmt.Fprintf(&script, "-F %s\n", c)
			}
			for _, c := range chains[t] {
				fmt.Fprintf(&script, "-X %s\n", c)
				n++
			}
			script.WriteString("COMMIT\n")
		}
		if n == 0 && script.Len() == 0 {
			continue
		}
		logf("node cleanup: removing %d %s chains", n, fam)
		cmd := exec.Command(fam+"-restore", "--noflush")
		cmd.Stdin = strings.NewReader(script.String())
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s-restore: %w: %s\nscript:\n%s", fam, err, out, script.String())
		}
	}
	return nil
}

// hasKubeChains reports whether any KUBE-* chain exists (Start refuses such a host: it is, or
// was, a Kubernetes node of its own).
func hasKubeChains() (bool, error) {
	for _, fam := range []string{"iptables-save", "ip6tables-save"} {
		if _, err := exec.LookPath(fam); err != nil {
			continue
		}
		chains, _, err := kubeChains(fam)
		if err != nil {
			return false, err
		}
		for _, c := range chains {
			if len(c) > 0 {
				return true, nil
			}
		}
	}
	return false, nil
}

// nftTables lists the nftables tables as "family name".
func nftTables() ([]string, error) {
	out, err := exec.Command("nft", "list", "tables").Output()
	if err != nil {
		return nil, fmt.Errorf("nft list tables (hack/deps.sh installs nftables): %w", err)
	}
	var tables []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "table" {
			tables = append(tables, f[1]+" "+f[2])
		}
	}
	return tables, nil
}

// removeNewTables deletes the tables that did not exist before the node (once the KUBE-*
// chains are gone they hold only empty built-in chains).
func removeNewTables(existed []string, logf func(string, ...any)) error {
	tables, err := nftTables()
	if err != nil {
		return err
	}
	for _, t := range tables {
		if slices.Contains(existed, t) {
			continue
		}
		logf("node cleanup: deleting nftables table %s", t)
		if err := run("nft", append([]string{"delete", "table"}, strings.Fields(t)...)...); err != nil {
			return err
		}
	}
	return nil
}
