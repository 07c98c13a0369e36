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
// back to the group that had it.
//
// It does nothing without a controlling terminal (CI, a pipe), or when make is not in the
// foreground (`make demo &`: the shell keeps its terminal). While the demo holds the
// terminal, Ctrl-Z is ignored, by the demo and the processes it starts after: it would stop
// them and not make, and the shell would never get its terminal back.
func takeTerminal() (restore func(), err error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return func() {}, nil // no controlling terminal
	}
	fd := int(tty.Fd())
	prev, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	own := unix.Getpgrp()
	if err != nil || prev != own {
		tty.Close()
		return func() {}, nil // not ours to change, or we are in the background
	}
	// A background group that sets the foreground group is sent SIGTTOU, which stops it.
	signal.Ignore(syscall.SIGTTOU, syscall.SIGTSTP)
	if err := unix.Setpgid(0, 0); err != nil {
		tty.Close()
		return func() {}, err
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, unix.Getpgrp()); err != nil {
		_ = unix.Setpgid(0, own) // back with make, where Ctrl-C reaches us as before
		tty.Close()
		return func() {}, err
	}
	return func() {
		_ = unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, prev)
		tty.Close()
	}, nil
}
