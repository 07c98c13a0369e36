package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
)

// -kubectl measures kubectl lease (issue 37) against kubectl get leases -A on the bench's
// cluster (nine in ten Leases node heartbeats): how long until the first row prints, how
// long the whole list takes, and what the client uses, each command run by real kubectl
// with the plugin on PATH, one at a time on an otherwise idle cluster.

type kubectlCase struct {
	name string
	args []string
}

var kubectlCases = []kubectlCase{
	{"kubectl get leases -A", []string{"get", "leases", "-A"}},
	{"kubectl lease -A", []string{"lease", "-A"}},
	{"kubectl lease -A --class node-heartbeat", []string{"lease", "-A", "--class", "node-heartbeat"}},
	{"kubectl lease -A -o json", []string{"lease", "-A", "-o", "json"}},
}

// kubectlRun is one command's run.
type kubectlRun struct {
	firstRow, total, cpu time.Duration
	rssKB                int64
	lines                int
}

func runKubectl(ctx context.Context, cl *cluster, sizes []int, runs, workers int, dir string, logger *slog.Logger) error {
	root, err := exporterproc.ModuleRoot()
	if err != nil {
		return err
	}
	pluginDir := filepath.Join(dir, "plugin")
	logger.Info("building kubectl-lease with hack/build.sh")
	if b, err := exec.CommandContext(ctx, filepath.Join(root, "hack", "build.sh"), filepath.Join(pluginDir, "kubectl-lease"), "kubectl-lease").CombinedOutput(); err != nil {
		return fmt.Errorf("build kubectl-lease: %w\n%s", err, b)
	}
	env := append(os.Environ(), "KUBECONFIG="+cl.cp.KubeconfigPath(), "HOME="+dir,
		"PATH="+pluginDir+string(os.PathListSeparator)+cl.cp.AssetsDir()+string(os.PathListSeparator)+os.Getenv("PATH"))
	fmt.Printf("\nkubectl lease against kubectl get leases -A (commit %s; medians of %d runs; one in ten Leases elects a leader):\n\n", gitCommit(), runs)
	fmt.Println("| Leases | command | first row (s) | whole list (s) | lines out | CPU (s) | max RSS (MB) |")
	fmt.Println("|---:|---|---:|---:|---:|---:|---:|")
	for _, n := range sizes {
		logger.Info("creating Leases", "total", n, "new", n-len(cl.slots))
		if _, err := cl.grow(ctx, n, workers); err != nil {
			return err
		}
		results := make([][]kubectlRun, len(kubectlCases))
		for r := range runs {
			for i, c := range kubectlCases { // interleaved, so drift hits every command alike
				k, err := timeKubectl(ctx, env, c.args)
				if err != nil {
					return fmt.Errorf("%s at %d Leases: %w", c.name, n, err)
				}
				logger.Info("kubectl", "leases", n, "run", r+1, "command", c.name, "first_row", k.firstRow, "total", k.total, "rss_kb", k.rssKB)
				results[i] = append(results[i], k)
			}
		}
		for i, c := range kubectlCases {
			med := func(f func(kubectlRun) float64) float64 {
				var vs []float64
				for _, k := range results[i] {
					vs = append(vs, f(k))
				}
				return median(vs)
			}
			fmt.Printf("| %d | `%s` | %.2f | %.2f | %.0f | %.2f | %.0f |\n", n, c.name,
				med(func(k kubectlRun) float64 { return k.firstRow.Seconds() }), med(func(k kubectlRun) float64 { return k.total.Seconds() }),
				med(func(k kubectlRun) float64 { return float64(k.lines) }), med(func(k kubectlRun) float64 { return k.cpu.Seconds() }),
				med(func(k kubectlRun) float64 { return float64(k.rssKB) / 1024 }))
		}
	}
	return nil
}

// timeKubectl runs kubectl args: the first row is the first line after the header (for
// -o json, the first line), the whole list is the process's exit; CPU and RSS are the
// process's (kubectl execs a plugin in its own place).
func timeKubectl(ctx context.Context, env, args []string) (kubectlRun, error) {
	cmd := exec.CommandContext(ctx, "kubectl", args...)
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return kubectlRun{}, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return kubectlRun{}, err
	}
	var k kubectlRun
	sc := bufio.NewReader(stdout)
	json := len(args) > 0 && args[len(args)-1] == "json"
	for {
		line, err := sc.ReadString('\n')
		if line != "" {
			k.lines++
			if k.firstRow == 0 && (json || k.lines == 2) {
				k.firstRow = time.Since(start)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return k, err
		}
	}
	if err := cmd.Wait(); err != nil {
		return k, fmt.Errorf("%w: %s", err, stderr.String())
	}
	k.total = time.Since(start)
	k.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		k.rssKB = ru.Maxrss
	}
	return k, nil
}
