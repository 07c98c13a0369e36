package node

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
)

// kubeChainPrefix names every chain kube-proxy and the kubelet create (KUBE-SERVICES,
// KUBE-SVC-..., KUBE-KUBELET-CANARY, ...), and nothing else on a host names chains so. Cleanup
// only runs on a host where a node of this package ran (Workdir exists), Start refuses a host
// that already had such chains, and the node lock keeps a second node out until Cleanup has
// finished, so every chain with this prefix is this node's.
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
		return nil, fmt.Errorf("nft list tables (hack/deps.sh release installs nftables): %w", err)
	}
	var tables []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "table" {
			tables = append(tables, f[1]+" "+f[2])
		}
	}
	return tables, nil
}

// iptablesNFTTables are the tables iptables-nft creates on first use, in families ip and ip6:
// the only ones the node's components (the kubelet and kube-proxy in iptables mode) make.
var iptablesNFTTables = []string{"filter", "nat", "mangle", "raw", "security"}

// removeNewTables deletes the tables the node made: those that did not exist before it
// (existed), are tables iptables-nft makes, and hold nothing once the KUBE-* chains are gone
// but empty built-in chains. A table that appeared meanwhile with anything else in it, or under
// another name, was made by something other than the node (a container runtime's, a firewall's)
// and is left as it is, with a line saying so.
func removeNewTables(existed []string, logf func(string, ...any)) error {
	tables, err := nftTables()
	if err != nil {
		return err
	}
	for _, t := range tables {
		if slices.Contains(existed, t) {
			continue
		}
		family, name, _ := strings.Cut(t, " ")
		if (family != "ip" && family != "ip6") || !slices.Contains(iptablesNFTTables, name) {
			logf("node cleanup: leaving nftables table %s: iptables-nft makes no table of that name, so the node did not", t)
			continue
		}
		out, err := exec.Command("nft", "-j", "list", "table", family, name).Output()
		if err != nil {
			return fmt.Errorf("nft -j list table %s: %w", t, err)
		}
		what, err := tableContent(out)
		if err != nil {
			return fmt.Errorf("nft -j list table %s: %w", t, err)
		}
		if what != "" {
			logf("node cleanup: leaving nftables table %s: it holds %s, which the node did not make", t, what)
			continue
		}
		logf("node cleanup: deleting nftables table %s", t)
		if err := run("nft", "delete", "table", family, name); err != nil {
			return err
		}
	}
	return nil
}

// tableContent reads `nft -j list table` and names what the table holds besides built-in
// chains without rules ("" for nothing): a rule, a regular chain, a set or any other object.
func tableContent(listing []byte) (string, error) {
	var doc struct {
		Nftables []map[string]json.RawMessage `json:"nftables"`
	}
	if err := json.Unmarshal(listing, &doc); err != nil {
		return "", err
	}
	for _, obj := range doc.Nftables {
		for kind, raw := range obj {
			switch kind {
			case "metainfo", "table":
			case "chain":
				var c struct {
					Name string `json:"name"`
					Hook string `json:"hook"`
				}
				if err := json.Unmarshal(raw, &c); err != nil {
					return "", err
				}
				if c.Hook == "" {
					return "chain " + c.Name, nil
				}
			default:
				return "a " + kind, nil
			}
		}
	}
	return "", nil
}
