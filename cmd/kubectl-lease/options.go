package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/lease-exporter/lease-exporter/lock"
)

// options are kubectl's connection flags (cli-runtime's ConfigFlags: --kubeconfig,
// --context, -n and the rest) and the plugin's.
type options struct {
	config  *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
	// print makes -o's structured printers (json, yaml, jsonpath, go-template...), as kubectl get's.
	print *genericclioptions.PrintFlags

	allNamespaces, noHeaders, watch bool
	selector, output, class         string
	locks                           []string
	exporter, exporterService       string

	// connect reads the cluster: newSource, or a test's fixture.
	connect func(*options) (*source, error)
}

// tableOutputs are the -o values the plugin prints itself ("" is the table).
var tableOutputs = []string{"", "wide", "name"}

func newOptions(streams genericiooptions.IOStreams) *options {
	o := &options{streams: streams, locks: []string{lock.DefaultKind.Resource()},
		config: genericclioptions.NewConfigFlags(true).WithDeprecatedPasswordFlag().WithDiscoveryBurst(300)}
	o.print = &genericclioptions.PrintFlags{JSONYamlPrintFlags: genericclioptions.NewJSONYamlPrintFlags(),
		TemplatePrinterFlags: genericclioptions.NewKubeTemplatePrintFlags(), OutputFormat: &o.output}
	return o
}

func (o *options) outputs() []string {
	return append(o.print.AllowedFormats(), append(tableOutputs[1:], "custom-columns", "custom-columns-file")...)
}

// printer prints the list's document (listJSON) as -o asks: kubectl's custom columns, or
// PrintFlags' json, yaml, kyaml, jsonpath, go-template and their -file forms.
func (o *options) printer() (printers.ResourcePrinter, error) {
	if p, ok, err := customColumns(o.output, o.noHeaders); ok {
		return p, err
	}
	p, err := o.print.ToPrinter()
	if genericclioptions.IsNoCompatiblePrinterError(err) {
		return nil, genericclioptions.NoCompatiblePrinterError{OutputFormat: &o.output, AllowedFormats: o.outputs()}
	} else if err != nil {
		return nil, fmt.Errorf("invalid -o %s: %w", o.output, err)
	}
	return p, nil
}

func (o *options) addCommonFlags(fs *pflag.FlagSet) {
	o.config.AddFlags(fs)
	fs.StringSliceVar(&o.locks, "locks", o.locks, "Kinds of lock objects to read, as the exporter's --locks spells them: "+lock.KindNames("and")+
		" (the leader annotation of ConfigMap and Endpoints locks).")
	fs.StringVar(&o.exporter, "exporter", "", "URL of a lease-exporter (its JSON API) to read the history from, e.g. http://127.0.0.1:10047 after kubectl port-forward -n monitoring svc/lease-exporter 10047:http-metrics.")
	fs.StringVar(&o.exporterService, "exporter-service", "", "NAMESPACE/NAME[:PORT] of a lease-exporter Service to read the history from through a port-forward to one of its Ready Pods, as kubectl port-forward does (the kubelet connects inside the Pod, so the shipped NetworkPolicy does not block it); needs \"create\" on pods/portforward. Otherwise kubectl port-forward yourself and give --exporter.")
}

func (o *options) addListFlags(fs *pflag.FlagSet) {
	fs.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "List the locks across all namespaces.")
	fs.StringVarP(&o.selector, "selector", "l", "", "Label selector to filter on, as kubectl get takes it (e.g. -l app=web).")
	fs.StringVarP(&o.output, "output", "o", "", "Output format: "+strings.Join(o.outputs(), ", ")+
		" (jsonpath=TEMPLATE, go-template=TEMPLATE and their -file= forms run over -o json's document; custom-columns=HEADER:PATH,... and custom-columns-file=FILE print a row per lock of its leases).")
	fs.BoolVar(&o.noHeaders, "no-headers", false, "Print the table without its headers.")
	fs.BoolVarP(&o.watch, "watch", "w", false, "After listing, watch the locks and print a row each time one changes holder or standing, judged by observation as the exporter judges it, with the holder's clock skew.")
	fs.StringVar(&o.class, "class", "", "List only locks of this class: "+lock.ClassNames("or")+". Node heartbeats are summed up unless asked for.")
}

// validate checks the plugin's flags before any request; kubectl's are checked by the client.
func (o *options) validate() error {
	if !slices.Contains(tableOutputs, o.output) {
		if _, err := o.printer(); err != nil {
			return err
		}
	}
	if o.watch && o.output != "" && o.output != "wide" {
		return fmt.Errorf("--watch prints the table or -o wide, not -o %s: drop one of them", o.output)
	}
	if _, err := o.kinds(); err != nil {
		return err
	}
	if _, err := lock.ParseClass(o.class); o.class != "" && err != nil {
		return fmt.Errorf("invalid --class %q: %w", o.class, err)
	}
	if _, err := labels.Parse(o.selector); err != nil {
		return fmt.Errorf("invalid label selector %q: %v", o.selector, err)
	}
	if o.exporter != "" && o.exporterService != "" {
		return fmt.Errorf("--exporter and --exporter-service both name an exporter: give one")
	}
	return nil
}

// kinds are the lock kinds --locks names, in its order, parsed as the exporter's --locks.
func (o *options) kinds() ([]lock.Kind, error) {
	kinds, err := lock.ParseKinds(o.locks)
	if err != nil {
		return nil, fmt.Errorf("invalid --locks %q: %w", strings.Join(o.locks, ","), err)
	}
	return kinds, nil
}

// namespace is -n's, or the context's; "" (all) with -A.
func (o *options) namespace() (string, error) {
	if o.allNamespaces {
		return "", nil
	}
	ns, _, err := o.config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("reading the namespace from your kubeconfig: %w", err)
	}
	return ns, nil
}
