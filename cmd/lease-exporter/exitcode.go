package main

import "errors"

// Exit codes, documented in the README, so scripts and crash-loop alerts can tell failures apart.
const (
	exitOK          = 0
	exitRuntime     = 1 // serving failed after start
	exitUsage       = 2 // invalid flag, selector or web config file
	exitKubeConfig  = 3 // kubeconfig unreadable, malformed, or names an unknown context
	exitUnreachable = 4 // API server did not answer at start
)

type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

type kubeConfigError struct{ error }

func (e kubeConfigError) Unwrap() error { return e.error }

type unreachableError struct{ error }

func (e unreachableError) Unwrap() error { return e.error }

// exitCode maps an error from parseOptions or run to the process exit code.
func exitCode(err error) int {
	var (
		usage       usageError
		kubeConfig  kubeConfigError
		unreachable unreachableError
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &usage):
		return exitUsage
	case errors.As(err, &kubeConfig):
		return exitKubeConfig
	case errors.As(err, &unreachable):
		return exitUnreachable
	default:
		return exitRuntime
	}
}
