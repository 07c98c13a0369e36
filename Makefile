# lease-exporter: the targets people expect. `make help` lists them.
SHELL := /bin/bash
GO ?= go
BIN := bin/lease-exporter
# The control-plane bin dir (kube-apiserver, etcd, kubectl...) used by tests and the demo.
ASSETS = $(shell hack/deps.sh | tail -1)
# Older Kubernetes minors the integration suite also runs on (docs/compatibility.md says why).
KUBE_MATRIX := 1.35 1.34

.PHONY: help build test test-release soak node-scale mixin fuzz vuln-selftest unit lint bench bench-prom bench-alerts demo deps generate krew clean

help: ## List the targets.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

build: ## Build bin/lease-exporter exactly as the Dockerfile does, and the kubectl plugin bin/kubectl-lease.
	hack/build.sh $(BIN)
	hack/build.sh bin/kubectl-lease kubectl-lease

deps: ## Install test dependencies (Debian packages, control-plane binaries).
	hack/deps.sh

# The release tier's suites. Their files carry the build tag `release`, so `go test ./...`
# (and `make test`) leaves them out, and `make test-release` runs them: test/node, the
# longest, then the Perses render in one lane; these, then the matrix suites, one at a time
# in a second lane beside it.
RELEASE_NODE_PKG := ./test/node/
RELEASE_PKGS := ./test/image/ ./test/release/ ./test/operator/ ./test/thanos/ ./test/krew/
# Where `make soak` keeps its artifacts (go test -artifacts): the soak's soak.csv.
ARTIFACTS ?= /tmp/lease-exporter-artifacts
# The soak runs on its own target (`make soak`), not in the release tier: a chart default's
# change does not need 30 minutes of it (issue 49).
SOAK_TEST := TestSoak10kLeasesOnChartDefaults

test: lint ## The fast tier, CI's: unit, integration, e2e with real Prometheus and Alertmanager, reliability, deploy rendering, demo, dashboards, mixin, bench smoke, fuzz, vulnerability self-test (Kubernetes 1.36).
	@# The builds of the controller-runtime manager (internal/testenv/election waits for
	@# it) and of kube-state-metrics (for hack/detect -smoke, last), the fuzzers and the
	@# vulnerability-scan self-test (CPU-bound compiles, no timing) run beside the suites at
	@# the lowest CPU priority, in what the timing-bound suites leave idle
	@# (docs/compatibility.md, "What it costs").
	assets="$$(hack/deps.sh | tail -1)" && \
	log="$$(mktemp)" && { nice -n 19 sh -c 'hack/tools/crmanager/build.sh >/dev/null && hack/tools/ksm/build.sh >/dev/null && $(MAKE) --no-print-directory fuzz vuln-selftest' >"$$log" 2>&1 & bg=$$!; } && \
	rc=0 && { KUBEBUILDER_ASSETS="$$assets" $(GO) test -race -count=1 -timeout 40m ./... && \
		hack/dashcheck/check.sh && \
		(cd mixin/render && GOWORK=off $(GO) vet ./... && GOWORK=off $(GO) test -count=1 ./...) && \
		KUBEBUILDER_ASSETS="$$assets" $(GO) run ./hack/bench -smoke && \
		KUBEBUILDER_ASSETS="$$assets" $(GO) run ./hack/detect -smoke; } || rc=1; \
	wait $$bg || rc=1; echo "--- crmanager and kube-state-metrics builds, fuzz and vuln-selftest (run beside the suites):"; cat "$$log"; rm -f "$$log"; exit $$rc

test-release: ## The release tier: the image, make release (twice, identical; through a real registry), the chart on a real node (with 100k Leases and faults in the Pod), the Prometheus Operator, Thanos, the krew manifest, every shipped dashboard drawn in Perses in Chromium, and the integration suite on Kubernetes 1.35 and 1.34. Must pass before a change to the Dockerfile, deploy/, mixin/, the node harness, the Kubernetes versions or chart defaults is done.
	@# The operator with its Prometheus, Thanos, Perses and the matrix's minors build one
	@# after another in the background at the lowest CPU priority, in the order the suites
	@# need them; a suite that needs one waits for it (each build script is locked and cached).
	@# Two lanes, so that at most two suites run at once on two cores. One: test/node, then the
	@# dashboards drawn in Perses in Chromium (test/e2e's release-tagged render, over e2e's
	@# staged elections), which needs the CPU the other lane has left by then; its output is
	@# printed when it ends. Beside it: the other release suites one at a time, then the
	@# integration suite on each of the matrix's minors. Each suite runs even when one before
	@# it failed; the tier fails if any did.
	assets="$$(hack/deps.sh release | tail -1)" && mkdir -p $(ARTIFACTS) && log="$$(mktemp)" || exit 1; \
	{ for b in "hack/tools/build.sh release" hack/prometheus-operator/build.sh hack/thanos/build.sh hack/perses/build.sh $(patsubst %,"hack/kube-binaries/build.sh %",$(KUBE_MATRIX)); do \
		nice -n 19 $$b 2>&1 >/dev/null | grep --line-buffered -E ': (building|built) '; done & } ; \
	{ ( rc=0; \
		KUBEBUILDER_ASSETS="$$assets" $(GO) test -race -count=1 -tags release -timeout 60m -skip '^$(SOAK_TEST)$$' $(RELEASE_NODE_PKG) || rc=1; \
		KUBEBUILDER_ASSETS="$$assets" $(GO) test -race -count=1 -tags release -timeout 20m -run '^TestDashboardsDrawInPerses$$' ./test/e2e/ || rc=1; \
		exit $$rc ) >"$$log" 2>&1 & node=$$!; } ; \
	rc=0; \
	KUBEBUILDER_ASSETS="$$assets" $(GO) test -p 1 -race -count=1 -tags release -timeout 40m $(RELEASE_PKGS) || rc=1; \
	for v in $(KUBE_MATRIX); do \
		d="$$(hack/kube-binaries/build.sh $$v | tail -1)" && \
		KUBEBUILDER_ASSETS="$$d" $(GO) test -race -count=1 -timeout 20m ./test/integration/ || rc=1; \
	done; \
	wait $$node || rc=1; echo "--- $(RELEASE_NODE_PKG), then the Perses render (run beside the suites above):"; cat "$$log"; rm -f "$$log"; exit $$rc

soak: ## The 30-minute soak: the chart's defaults on a real node over 10k Leases at their writers' cadences, memory and goroutines held flat (root). Required before a release and after changes to informer/, collector/ or exposition/; its CSV is kept under /tmp/lease-exporter-artifacts.
	mkdir -p $(ARTIFACTS)
	KUBEBUILDER_ASSETS="$$(hack/deps.sh release | tail -1)" \
		$(GO) test -race -count=1 -tags release -timeout 60m -run '^$(SOAK_TEST)$$' -v -artifacts -outputdir $(ARTIFACTS) ./test/node/

node-scale: ## The chart's defaults on a real node at 100k Leases with 10 minutes of churn: docs/deploy.md's sizing run (root).
	KUBEBUILDER_ASSETS="$$(hack/deps.sh release | tail -1)" LEASE_EXPORTER_NODE_CHURN=10m \
		$(GO) test -race -count=1 -tags release -timeout 60m -run '^TestChartDefaultsSurvive100kLeases$$' -v ./test/node/

fuzz: ## Fuzz the collector, the leader-record parser, the Events' note parser and list pages, kubectl lease's escaping and its reading of the API server's Date header, each for a fixed count of inputs (5 to 16 s each on this machine alone).
	@# Counts, not durations: Go 1.26's fuzz coordinator can fail a duration-bound run with
	@# "context deadline exceeded" when its workers are starved at the deadline (go.dev/issue/75804,
	@# fixed in Go 1.27), and make test runs these beside the suites at the lowest priority.
	$(GO) test -run '^$$' -fuzz FuzzCollect -fuzztime 6000x ./collector/
	$(GO) test -run '^$$' -fuzz FuzzParseLeaderRecord -fuzztime 50000x ./lock/leaderrecord/
	$(GO) test -run '^$$' -fuzz FuzzNoteRoundTrip -fuzztime 14000x ./events/
	$(GO) test -run '^$$' -fuzz FuzzDecodePage -fuzztime 14000x ./events/
	$(GO) test -run '^$$' -fuzz FuzzEscRoundTrip -fuzztime 20000x ./cmd/kubectl-lease/
	$(GO) test -run '^$$' -fuzz FuzzCustomColumnsRoundTrip -fuzztime 20000x ./cmd/kubectl-lease/
	$(GO) test -run '^$$' -fuzz FuzzServerClockObserve -fuzztime 20000x ./cmd/kubectl-lease/

vuln-selftest: ## Check the vulnerability scan's wiring offline (hack/govulncheck.sh --selftest, mkvulndb's tests).
	hack/govulncheck.sh --selftest
	cd hack/tools/vuln && GOWORK=off $(GO) test -count=1 ./mkvulndb/

unit: ## Run only the fast unit tests (no control plane).
	@# Every top-level product directory (all but test/, internal/ and hack/): cmd/lease-exporter's
	@# TestMakeUnitCoversEveryProductPackage fails when one is missing.
	$(GO) test -race -short ./cmd/... ./collector/... ./events/... ./exposition/... ./informer/... ./lock/... ./statuspage/... ./hack/lockkinds/ ./hack/soakplot/
	cd mixin/render && GOWORK=off $(GO) test -short ./...

lint: ## gofmt, go vet and go mod tidy must be clean.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	@# -race: vet compiles every dependency for its type information; compiled as the test
	@# run compiles them, they are built once for both (cold, vet and the tests otherwise
	@# compile each dependency twice).
	@# -tags release: the release tier's suites are vetted too.
	$(GO) vet -race -tags release ./...
	$(GO) mod tidy -diff

bench: ## Micro-benchmarks, then the end-to-end benchmark against a local control plane (~15 min).
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./collector/ ./informer/
	KUBEBUILDER_ASSETS="$(ASSETS)" $(GO) run ./hack/bench -leases 1000,10000,100000 -churn 1000 -runs 3

bench-prom: ## What each metric set costs a real Prometheus, side by side with kube-state-metrics, at 50k and 100k Leases (~25 min).
	KUBEBUILDER_ASSETS="$(ASSETS)" $(GO) run ./hack/bench -leases 50000,100000 -prometheus 10m

bench-alerts: ## What the alerts catch: every fault of docs/detection.md on real electors, ours beside the self-report and kube-state-metrics rules, into docs/detection.json, .md and .svg (~40 min; after make test).
	KUBEBUILDER_ASSETS="$$(hack/deps.sh | tail -1)" $(GO) run ./hack/detect

demo: ## Start a local control plane with live elections, the exporter, Prometheus and Alertmanager.
	KUBEBUILDER_ASSETS="$$(hack/deps.sh demo | tail -1)" $(GO) run ./hack/demo

generate: ## Regenerate what derives from mixin/ and the lock kinds table (the rule file, the PrometheusRules, dashboards/ and their deploy copies, lock kinds' RBAC and switches).
	cd mixin/render && GOWORK=off $(GO) run . -root ../..
	$(GO) run ./hack/lockkinds

mixin: ## Render the mixin with your _config into OUT: make mixin OUT=dir CONFIG='{ exporterSelector: "job=\"x\"" }' (docs/alerts.md#tuning).
	@test -n "$(OUT)" || { echo "make mixin: set OUT=<directory> (and CONFIG='{...}', a jsonnet object merged into _config)"; exit 2; }
	cd mixin/render && GOWORK=off $(GO) run . -root ../.. -config '$(or $(CONFIG),{})' -out "$(abspath $(OUT))"

release: ## Build release VERSION=X.Y.Z into dist/ from a clean tree: archives for linux and darwin on amd64 and arm64, the multi-arch image, the chart, the Kustomize tree, the krew manifest, SBOMs, SHA256SUMS (signed with COSIGN_KEY if set); reproducible (docs/versioning.md).
	VERSION="$(VERSION)" hack/release/release.sh

krew: ## Build kubectl lease for linux and darwin on amd64 and arm64 into dist/krew and write its krew manifest plugins/lease.yaml, checked by krew's validator (VERSION=1.2.3 for a release).
	hack/krew/package.sh

clean: ## Remove build output.
	rm -rf bin dist plugins/lease.yaml
