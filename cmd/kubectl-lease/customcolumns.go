package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"
)

// -o custom-columns, as kubectl get's: cli-runtime has no printer for it (kubectl's own is
// in k8s.io/kubectl), so it is written here over client-go's jsonpath, a row per lock of the
// list's document, each PATH read from that lock's JSON (.holder, .standing...).

// columnsPrinter prints a row per lock, a column per header, each cell through esc as the
// table's.
type columnsPrinter struct {
	headers   []string
	paths     []*jsonpath.JSONPath
	noHeaders bool
}

// customColumns reads -o custom-columns=HEADER:PATH,... or custom-columns-file=FILE (a line
// of headers and a line of paths, whitespace-separated), as kubectl does; ok is false for any
// other output.
func customColumns(output string, noHeaders bool) (p *columnsPrinter, ok bool, err error) {
	var specs []string
	p = &columnsPrinter{noHeaders: noHeaders}
	if spec, found := strings.CutPrefix(output, "custom-columns="); found {
		for _, col := range strings.Split(spec, ",") {
			header, path, found := strings.Cut(col, ":")
			if !found {
				return nil, true, fmt.Errorf("invalid -o custom-columns: %q is not HEADER:PATH", col)
			}
			p.headers, specs = append(p.headers, header), append(specs, path)
		}
	} else if file, found := strings.CutPrefix(output, "custom-columns-file="); found {
		b, err := readSpecFile(file)
		if err != nil {
			return nil, true, fmt.Errorf("invalid -o custom-columns-file: %w", err)
		}
		lines := append(strings.SplitN(string(b), "\n", 3), "")
		p.headers, specs = strings.Fields(lines[0]), strings.Fields(lines[1])
		if len(p.headers) == 0 || len(p.headers) != len(specs) {
			return nil, true, fmt.Errorf("invalid -o custom-columns-file: %d headers on its first line, %d paths on its second", len(p.headers), len(specs))
		}
	} else {
		return nil, false, nil
	}
	for i, spec := range specs {
		// kubectl's relaxed paths: .holder, holder, {.holder} and {holder} are one.
		path := jsonpath.New(p.headers[i]).AllowMissingKeys(true)
		if err := path.Parse("{." + strings.TrimPrefix(strings.TrimSuffix(strings.TrimPrefix(spec, "{"), "}"), ".") + "}"); err != nil {
			return nil, true, fmt.Errorf("invalid -o custom-columns path %q: %w", spec, err)
		}
		p.paths = append(p.paths, path)
	}
	return p, true, nil
}

// PrintObj prints the locks of obj, listJSON's document; a missing, null or empty value is
// <none>, several are joined by commas.
func (p *columnsPrinter) PrintObj(obj runtime.Object, w io.Writer) error {
	var doc struct {
		Leases []map[string]any `json:"leases"`
	}
	d := json.NewDecoder(bytes.NewReader(obj.(*runtime.Unknown).Raw))
	d.UseNumber() // numbers as written: 15, not 15.000000
	if err := d.Decode(&doc); err != nil {
		return err
	}
	tw := printers.GetNewTabWriter(w)
	if !p.noHeaders {
		tabRow(tw, "", p.headers...)
	}
	for _, l := range doc.Leases {
		row := make([]string, len(p.paths))
		for i, path := range p.paths {
			results, err := path.FindResults(l)
			if err != nil {
				return err
			}
			var values []string
			for _, r := range results {
				for _, v := range r {
					if v.IsValid() && v.Interface() != nil {
						values = append(values, fmt.Sprint(v.Interface()))
					}
				}
			}
			row[i] = cmp.Or(strings.Join(values, ","), "<none>")
		}
		tabRow(tw, "", row...)
	}
	return tw.Flush()
}

// maxSpecFile bounds a custom-columns file: two lines of headers and paths.
const maxSpecFile = 64 << 10

// readSpecFile reads a custom-columns file, refusing one over maxSpecFile before holding it.
func readSpecFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSpecFile+1))
	if err == nil && len(b) > maxSpecFile {
		err = fmt.Errorf("%s is over %d KiB; it holds two lines, headers and paths", name, maxSpecFile>>10)
	}
	return b, err
}
