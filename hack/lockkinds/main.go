// Command lockkinds writes what deploy/ needs to know of each lock kind, from the one table
// of them (lock/kinds.go), so that a new kind is a row there, its decoder and
// `make generate`. For every kind besides Leases (which the base grants and watches):
//
//   - deploy/kustomize/components/<kind>-locks/kustomization.yaml: the component that adds
//     --locks=leases,<resource> and the kind's RBAC rule to the ClusterRole or every Role;
//   - deploy/helm/lease-exporter/templates/_lockkinds.tpl: the kinds as data, which the chart's
//     RBAC rules, --locks args and NOTES range over;
//   - the locks block of the chart's values.yaml and values.schema.json: one switch per kind.
//
// Run it from the repository root (make generate does). main_test.go fails while a committed
// file differs from what it would write.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	if err := run("."); err != nil {
		fmt.Fprintln(os.Stderr, "lockkinds:", err)
		os.Exit(1)
	}
}

// run rewrites every output under root that differs from what the table gives.
func run(root string) error {
	written := 0
	for _, o := range outputs() {
		path := filepath.Join(root, o.path)
		old, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		b, err := o.render(old)
		if err != nil {
			return fmt.Errorf("%s: %w", o.path, err)
		}
		if bytes.Equal(b, old) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
		written++
	}
	fmt.Fprintf(os.Stderr, "hack/lockkinds: %d of %d files rewritten from the lock kinds table\n", written, len(outputs()))
	return nil
}
