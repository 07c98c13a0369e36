package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

const usage = `Usage: go run . -list DASHBOARDS_DIR [flags]

Prints every panel query of the dashboards in DASHBOARDS_DIR with template
variables substituted, one JSON object per line:
  {"file":"leases-overview.json","panel":"...","refId":"A","expr":"...","instant":true}
Template-variable queries (label_values) are not listed. Exits 1 if a query
references an unknown variable.

Flags:
`

func main() {
	vars := DefaultVars()
	fs := flag.NewFlagSet("dashcheck-promql", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	dir := fs.String("list", "", "dashboards directory to list queries from")
	for _, name := range []string{"job", "cluster", "namespace", "lease"} {
		fs.Func(name, fmt.Sprintf("value for $%s (default %q)", name, vars[name]), func(v string) error {
			vars[name] = v
			return nil
		})
	}
	fs.Func("rate-interval", fmt.Sprintf("value for $__rate_interval (default %q)", vars["__rate_interval"]), func(v string) error {
		vars["__rate_interval"] = v
		return nil
	})
	fs.Func("range", fmt.Sprintf("value for $__range (default %q)", vars["__range"]), func(v string) error {
		vars["__range"] = v
		return nil
	})
	fs.Var(vars, "var", "any other variable as name=value (repeatable)")
	_ = fs.Parse(os.Args[1:])
	if *dir == "" || fs.NArg() > 0 {
		fs.Usage()
		os.Exit(2)
	}
	if err := list(os.Stdout, *dir, vars); err != nil {
		fmt.Fprintln(os.Stderr, "dashcheck-promql:", err)
		os.Exit(1)
	}
}

// list writes the substituted panel queries of every dashboard in dir as
// JSON lines.
func list(w io.Writer, dir string, vars Vars) error {
	queries, err := listQueries(dir, vars)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // keep PromQL's < > & readable
	for _, q := range queries {
		if err := enc.Encode(q); err != nil {
			return err
		}
	}
	return nil
}

func listQueries(dir string, vars Vars) ([]Query, error) {
	dashboards, names, err := loadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Query
	var errs []string
	for _, name := range names {
		for _, q := range dashboards[name].queries(name) {
			if q.Variable != "" {
				continue
			}
			expr, err := vars.Substitute(q.Expr)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", q.where(), err))
				continue
			}
			q.Expr = expr
			out = append(out, q)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}
