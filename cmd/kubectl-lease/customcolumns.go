package main

import (
	"fmt"
	"io"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"
	"k8s.io/kubectl/pkg/cmd/get"
)

// customColumns is kubectl get's own printer for -o custom-columns=HEADER:PATH,... and
// custom-columns-file=FILE, a row per lock of the list's document; ok is false for any other
// output.
func customColumns(output string, noHeaders bool) (p printers.ResourcePrinter, ok bool, err error) {
	flags := get.NewCustomColumnsPrintFlags()
	flags.NoHeaders = noHeaders
	p, err = flags.ToPrinter(output)
	format, _, _ := strings.Cut(output, "=")
	if genericclioptions.IsNoCompatiblePrinterError(err) {
		return nil, false, nil
	} else if err != nil {
		return nil, true, fmt.Errorf("invalid -o %s: %s", format, strings.TrimSpace(err.Error()))
	}
	cols := p.(*get.CustomColumnsPrinter)
	cols.NoHeaders = noHeaders       // kubectl's file form would print the headers regardless
	for _, c := range cols.Columns { // a bad path is said now, not after the list is read
		if err := jsonpath.New(c.Header).Parse(c.FieldSpec); err != nil {
			return nil, true, fmt.Errorf("invalid -o %s path %q: %w", format, c.FieldSpec, err)
		}
	}
	return leasesPrinter{p}, true, nil
}

// leasesPrinter gives kubectl's printer the document's locks as a list's items, each without
// its null and empty values, which it prints <none> as it does a missing one. Numbers keep
// their form (15, not 15.0); every value is already escaped (escValues).
type leasesPrinter struct{ printers.ResourcePrinter }

func (p leasesPrinter) PrintObj(obj runtime.Object, w io.Writer) error {
	var doc struct {
		Leases []map[string]any `json:"leases"`
	}
	if err := utiljson.Unmarshal(obj.(*runtime.Unknown).Raw, &doc); err != nil {
		return err
	}
	list := &unstructured.UnstructuredList{Items: make([]unstructured.Unstructured, len(doc.Leases))}
	for i, l := range doc.Leases {
		maps.DeleteFunc(l, func(_ string, v any) bool { return v == nil || v == "" })
		list.Items[i].Object = l
	}
	return p.ResourcePrinter.PrintObj(list, w)
}
