# lease-exporter: the targets people expect. `make help` lists them.
SHELL := /bin/bash
GO ?= go
BIN := bin/lease-exporter
# The control-plane bin dir (kube-apiserver, etcd, kubectl...) used by tests and the demo.
ASSETS = $(shell hack/deps.sh | tail -1)
# Older Kubernetes minors the integration suite also runs on (docs/compatibility.md says why).
KUBE_MATRIX := 1.35 1.34

.PHONY: help build test fuzz vuln-selftest unit lint bench bench-prom demo deps generate clean

help: ## List the targets.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

build: ## Build bin/lease-exporter exactly as the Dockerfile does.
	hack/build.sh $(BIN)

deps: ## Install test dependencies (Debian packages, control-plane binaries).
	hack/deps.sh

test: lint ## Run every test: unit, real control plane (Kubernetes 1.36, 1.35, 1.34), demo, Prometheus/Alertmanager, rules, dashboards, deploy, the image and a real node, fuzz, vulnerabilities.
	@# Cold, most of this run is building (docs/compatibility.md, "What it costs"). 1.36,
	@# which every suite needs, and helm build first, with the Debian packages; the other
	@# builds then run one after another in the background at the lowest CPU priority, in
	@# what the suites leave idle, in the order the suites need them: the Prometheus Operator
	@# and its Prometheus (test/deploy, test/node), Thanos (test/thanos), the matrix's older
	@# minors. A suite that needs one first waits for it (each build script is locked and
	@# cached). The matrix suites run last, one by one, once both are built; the
	@# fuzzers and the vulnerability-scan self-test (CPU-bound compiles, no timing) run beside
	@# them at the lowest priority, in what those suites leave idle. The "building"/"built in"
	@# lines say what each build cost. (Measured cold, each of these was slower: 1.36 built
	@# beside lint, the longest suites started first, the matrix suites side by side, which
	@# also broke a timing-bound test. On two cores, what runs side by side at the same
	@# priority slows down as much as it overlaps.)
	assets="$$(hack/deps.sh | tail -1)" && \
	{ for b in hack/prometheus-operator/build.sh hack/thanos/build.sh $(patsubst %,"hack/kube-binaries/build.sh %",$(KUBE_MATRIX)); do \
		nice -n 19 $$b 2>&1 >/dev/null | grep --line-buffered -E ': (building|built) '; done & } && \
	KUBEBUILDER_ASSETS="$$assets" $(GO) test -race -count=1 -timeout 40m ./...
	hack/dashcheck/check.sh
	cd hack/mixin && GOWORK=off $(GO) vet ./... && GOWORK=off $(GO) test -count=1 ./...
	KUBEBUILDER_ASSETS="$$(hack/kube-binaries/build.sh | tail -1)" $(GO) run ./hack/bench -smoke
	dirs=() && for v in $(KUBE_MATRIX); do d="$$(hack/kube-binaries/build.sh $$v)" || exit 1; dirs+=("$$d"); done && \
	log="$$(mktemp)" && { nice -n 19 $(MAKE) --no-print-directory fuzz vuln-selftest >"$$log" 2>&1 & bg=$$!; } && \
	rc=0 && for d in "$${dirs[@]}"; do \
		KUBEBUILDER_ASSETS="$$d" $(GO) test -race -count=1 -timeout 20m ./test/integration/ || { rc=1; break; }; \
	done; \
	wait $$bg || rc=1; echo "--- fuzz and vuln-selftest (run beside the matrix suites):"; cat "$$log"; rm -f "$$log"; exit $$rc

fuzz: ## Fuzz the collector and the leader-record parser, 20 s each.
	$(GO) test -run '^$$' -fuzz FuzzCollect -fuzztime 20s ./collector/
	$(GO) test -run '^$$' -fuzz FuzzParseLeaderRecord -fuzztime 20s ./informer/leaderrecord/

vuln-selftest: ## Check the vulnerability scan's wiring offline (hack/govulncheck.sh --selftest, mkvulndb's tests).
	hack/govulncheck.sh --selftest
	cd hack/tools/vuln && GOWORK=off $(GO) test -count=1 ./mkvulndb/

unit: ## Run only the fast unit tests (no control plane).
	$(GO) test -race -short ./informer/... ./collector/... ./statuspage/... ./cmd/... ./alerts/... ./hack/lockkinds/

lint: ## gofmt, go vet and go mod tidy must be clean.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	@# -race: vet compiles every dependency for its type information; compiled as the test
	@# run compiles them, they are built once for both (cold, vet and the tests otherwise
	@# compile each dependency twice).
	$(GO) vet -race ./...
	$(GO) mod tidy -diff

bench: ## Micro-benchmarks, then the end-to-end benchmark against a local control plane (~15 min).
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./collector/ ./informer/
	KUBEBUILDER_ASSETS="$(ASSETS)" $(GO) run ./hack/bench -leases 1000,10000,100000 -churn 1000 -runs 3

bench-prom: ## What each metric set costs a real Prometheus, side by side with kube-state-metrics, at 50k and 100k Leases (~25 min).
	KUBEBUILDER_ASSETS="$(ASSETS)" $(GO) run ./hack/bench -leases 50000,100000 -prometheus 10m

demo: ## Start a local control plane with live elections, the exporter, Prometheus and Alertmanager.
	KUBEBUILDER_ASSETS="$$(hack/deps.sh demo | tail -1)" $(GO) run ./hack/demo

generate: ## Regenerate what derives from mixin/ and the lock kinds table (alerts/*.yml, dashboards/, PrometheusRule, deploy copies, lock kinds' RBAC and switches).
	cd hack/mixin && GOWORK=off $(GO) run . -root ../..
	$(GO) generate ./alerts/
	deploy/sync.sh
	$(GO) run ./hack/lockkinds

clean: ## Remove build output.
	rm -rf bin
