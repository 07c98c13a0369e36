package main

import (
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
)

// environment is what the exporter takes from where it runs rather than from its flags.
// parseOptions reads it once, so that Validate is a function of the flags and it alone.
type environment struct {
	// podNamespace is where the Events writer's election Lease lives unless --events.lock
	// says: the Pod's own namespace (POD_NAMESPACE, else the service account's), else
	// "default".
	podNamespace string
	// identity names this replica in that election: its host name (the Pod's name) and a
	// random suffix, so a restarted Pod of the same name is a new candidate, as client-go's
	// users do.
	identity string
}

func readEnvironment() environment {
	env := environment{podNamespace: metav1.NamespaceDefault}
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		env.podNamespace = ns
	} else if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil && len(b) > 0 {
		env.podNamespace = string(b)
	}
	host, err := os.Hostname()
	if err != nil {
		host = "lease-exporter"
	}
	env.identity = host + "_" + rand.String(8)
	return env
}
