package main

import (
	"fmt"

	"github.com/prometheus/common/version"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

const listExamples = `  # The locks in the current namespace, judged as the exporter judges them
  kubectl lease

  # Every lock in the cluster, ConfigMap and Endpoints locks too, with the wide columns
  kubectl lease -A --locks leases,configmaps,endpoints -o wide

  # Every node heartbeat, not only the summary
  kubectl lease -n kube-node-lease --class node-heartbeat

  # Watch a failover: a row each time a lock changes holder or standing
  kubectl lease -n kube-system -w`

func newRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return newRootCommandWith(streams, newSource)
}

// newRootCommandWith is `kubectl lease` (list, and describe) reading through connect's source.
func newRootCommandWith(streams genericiooptions.IOStreams, connect func(*options) (*source, error)) *cobra.Command {
	o := newOptions(streams)
	o.connect = connect
	root := &cobra.Command{
		Use:   "kubectl-lease",
		Short: "Who holds each election lock, and whether validly, as lease-exporter judges it",
		Long: `kubectl lease lists every election lock (Leases, and with --locks the leader annotation of
ConfigMaps and Endpoints): who holds it, whether validly right now, how long ago it was
renewed, judged by the exporter's own code (the standings of lease_class_locks) against the
API server's clock (its Date header). A single read cannot measure a holder's clock skew: a
renewTime in the API server's future beyond what the lease tolerates is flagged ",skewed";
-w watches, judges by observation exactly as the exporter does, and shows the skew it measures.

Columns:
` + columnHelp(),
		Example:       listExamples,
		Version:       version.Version,
		Args:          cobra.NoArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl lease"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return runList(cmd.Context(), o)
		},
	}
	o.addCommonFlags(root.PersistentFlags())
	o.addListFlags(root.Flags())
	list := &cobra.Command{Use: "list", Short: "List the locks (the default command)", Long: root.Long,
		Example: listExamples, Args: cobra.NoArgs, RunE: root.RunE}
	o.addListFlags(list.Flags())
	root.AddCommand(list, newDescribeCommand(o))
	// kubectl completes plugins through kubectl_complete-lease, not a completion command.
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return fmt.Errorf("%w\nSee '%s --help' for usage.", err, cmd.DisplayName())
	})
	return root
}
