// Command whoami prints the user, group and supplementary groups it runs as, and whether it
// can find a shell, from inside a container whose image has no tools of its own: the image
// test mounts it into the lease-exporter image and runs it as the image's configured user.
package main

import (
	"fmt"
	"os"
	"os/exec"
)

func main() {
	groups, err := os.Getgroups()
	if err != nil {
		fmt.Fprintln(os.Stderr, "getgroups:", err)
		os.Exit(1)
	}
	fmt.Printf("uid=%d gid=%d groups=%v\n", os.Getuid(), os.Getgid(), groups)
	for _, sh := range []string{"sh", "bash", "dash", "ash", "busybox"} {
		if p, err := exec.LookPath(sh); err == nil {
			fmt.Printf("shell=%s\n", p)
		}
	}
}
