// Command pause is the node's sandbox image: it holds a Pod's namespaces open and exits on
// SIGTERM or SIGINT, as registry.k8s.io/pause does (which cannot be pulled here).
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
