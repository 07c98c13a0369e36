package main

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// takeTerminal makes the demo's process group the foreground group of its controlling
// terminal, so that Ctrl-C signals the demo alone. Otherwise make, in the foreground group
// with it, gets the SIGINT too and, once the demo has stopped everything and exited 0, dies
// of it: the user reads a clean stop as a failure. The returned function gives the terminal
// back to the group that had it. Without a controlling terminal (CI, a pipe) it does nothing.
func takeTerminal() (restore func(), err error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return func() {}, nil // no controlling terminal
	}
	fd := int(tty.Fd())
	prev, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err != nil {
		tty.Close()
		return func() {}, nil // /dev/tty opened but is not ours to change: leave it
	}
	// A background group that sets the foreground group is sent SIGTTOU, which stops it.
	signal.Ignore(syscall.SIGTTOU)
	if err := unix.Setpgid(0, 0); err != nil {
		tty.Close()
		return func() {}, err
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, unix.Getpgrp()); err != nil {
		tty.Close()
		return func() {}, err
	}
	return func() {
		_ = unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, prev)
		tty.Close()
	}, nil
}
