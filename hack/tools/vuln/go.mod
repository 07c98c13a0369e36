module github.com/lease-exporter/lease-exporter/hack/tools/vuln

go 1.26.0

require (
	golang.org/x/mod v0.42.0
	golang.org/x/vuln v1.9.0
)

require (
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/telemetry v0.0.0-20261010193011-f71dc92da45e // indirect
	golang.org/x/tools v0.52.0 // indirect
)

// The module proxy here serves no newer golang.org/x/telemetry than this (403 for the
// version govulncheck v1.9.0 asks for). govulncheck only counts events with it, locally.
replace golang.org/x/telemetry => golang.org/x/telemetry v0.0.0-20260708182218-49f421fb7959
