// Package alerts holds the shipped alert rules, lease-exporter.rules.yml (the mixin's default
// rendering, written by `make generate` from mixin/; never edited here), and their tests:
// promtool suites (tests/*.yml), the rule conventions (lint), runbooks, and mutants each
// suite must catch. Customising the rules is the mixin's _config (docs/alerts.md#tuning).
package alerts
