# ALM. `make help` lists the targets. Tools are built from source into bin/ (see hack/tools); nothing is downloaded
# but Go modules.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

ROOT := $(abspath .)
BIN  := $(ROOT)/bin
export ALM_BIN_DIR := $(BIN)
# envtest finds etcd and kube-apiserver here.
export KUBEBUILDER_ASSETS := $(BIN)

CONTROLLER_GEN := $(BIN)/controller-gen
GOLANGCI_LINT  := $(BIN)/golangci-lint
OPM            := $(BIN)/opm
CONTROL_PLANE  := $(BIN)/etcd $(BIN)/kube-apiserver $(BIN)/kube-controller-manager $(BIN)/kubectl
# The local node (test/localnode): kubelet, kube-proxy, kube-scheduler, containerd and its runc shim, CNI plugins;
# runc itself comes from Debian.
NODE           := $(BIN)/kubelet $(BIN)/kube-proxy $(BIN)/kube-scheduler $(BIN)/containerd $(BIN)/containerd-shim-runc-v2 \
	$(BIN)/cni/bridge $(BIN)/cni/host-local $(BIN)/cni/loopback /usr/sbin/runc /usr/sbin/nft
KUBE_VERSION_LDFLAGS := -X k8s.io/component-base/version.gitVersion=v1.35.1 \
	-X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=35

# -timeout: the packages that need the one node (test/localnode, test/e2e, test/workloads) take turns on its lock,
# so one may wait minutes for another before its own tests start.
GO_TEST_FLAGS ?= -count=1 -timeout 30m

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-14s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: build
build: ## Build alm, almctl (also as kubectl-alm) and konnect-operator into bin/.
	go build -o $(BIN)/ ./cmd/...

# almctl is also the kubectl plugin kubectl-alm (`kubectl alm ...`): the same program under kubectl's plugin name.
build: kubectl-alm
.PHONY: kubectl-alm
kubectl-alm: ## Build bin/kubectl-alm: almctl as a kubectl plugin (kubectl finds it on PATH).
	go build -o $(BIN)/kubectl-alm ./cmd/almctl

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code for the APIs.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./apis/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs and RBAC into config/.
	$(CONTROLLER_GEN) crd paths=./apis/operators/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=alm-manager paths=./cmd/alm/... output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) crd paths="./apis/konnect/...;./apis/configuration/..." output:crd:artifacts:config=config/konnect-operator/crd
	$(CONTROLLER_GEN) rbac:roleName=konnect-operator paths=./controllers/konnect/... output:rbac:artifacts:config=config/konnect-operator/rbac
	$(CONTROLLER_GEN) rbac:roleName=gateway-config paths=./cmd/gateway-config/... output:rbac:artifacts:config=config/gateway-config/rbac

.PHONY: fmt
fmt: ## gofmt the code.
	gofmt -s -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## go vet.
	go vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint (config in .golangci.yml).
	$(GOLANGCI_LINT) run ./...

.PHONY: bundles
bundles: ## Generate bundles/<package>/<version>/ from hack/bundles/*.yaml and the CRDs and RBAC in config/.
	go run ./hack/bundlegen/cmd/bundlegen --root . --input hack/bundles --output bundles

.PHONY: konnect-operations
konnect-operations: ## Write docs/konnect-operations.md: the Konnect API operations the operator calls and the simulator serves.
	go run ./test/konnectsim/cmd/konnect-operations

.PHONY: verify
verify: generate manifests ## Regenerate code, manifests, bundles and the chart's files and fail if anything changed.
	@$(MAKE) --no-print-directory bundles chart docs >/dev/null
	@if [ -n "$$(git status --porcelain -- apis config bundles charts $(REFERENCE))" ]; then \
		echo "generated files are out of date; run 'make generate manifests bundles chart docs' and commit:"; \
		git status --porcelain -- apis config bundles charts $(REFERENCE); git --no-pager diff --stat -- apis config bundles charts $(REFERENCE); exit 1; fi

##@ Reference pages

# The generated pages of docs/reference: the API from the Go types (hack/apidocs), almctl from its commands, the
# managers' flags from their flag sets. make verify regenerates them and fails when they changed.
REFERENCE := docs/reference/api.md docs/reference/almctl.md docs/reference/flags.md

.PHONY: docs
docs: ## Generate docs/reference/{api,almctl,flags}.md from the code (make verify checks them).
	go run ./hack/apidocs/cmd/apidocs api -out docs/reference/api.md -title "API reference" \
		apis/operators/v1alpha1 apis/konnect/v1alpha1 apis/konnect/cloudgateway/v1alpha1 apis/konnect/v1alpha2 apis/configuration/v1alpha1 apis/configuration/v1beta1 apis/configuration/v1
	go run ./cmd/almctl reference > docs/reference/almctl.md
	@tmp=$$(mktemp -d); TMPDIR=/tmp go run ./cmd/alm --help > $$tmp/alm; TMPDIR=/tmp go run ./cmd/konnect-operator --help > $$tmp/konnect; \
		go run ./hack/apidocs/cmd/apidocs flags -out docs/reference/flags.md -title "Manager flags" \
		-intro "The flags of ALM's manager and of the Konnect operator, from their flag sets (\`--help\`). [The managers](manager.md) explains how they run; the deploy manifests set them in \`config/manager\` and the Helm chart's values." \
		alm=$$tmp/alm konnect-operator=$$tmp/konnect; rm -rf $$tmp

##@ Helm chart

CHART := charts/alm
# What charts/alm renders from config/ as it is (only the namespace and labels change): the kustomization resources
# of these directories, copied into the chart's files/ so that the chart cannot drift from the generated manifests.
CHART_FILES := crd rbac admission

.PHONY: chart
chart: ## Copy config/'s CRDs, RBAC, admission policies and alerts into charts/alm/files (make verify checks them).
	@rm -rf $(CHART)/files && mkdir -p $(CHART)/files/prometheus
	@for d in $(CHART_FILES); do mkdir -p $(CHART)/files/$$d; \
		for f in $$(sed -n 's/^  - \([^ ]*\.yaml\).*/\1/p' config/$$d/kustomization.yaml); do \
			cp config/$$d/$$f $(CHART)/files/$$d/$$(basename $$f); done; done
	@cp config/prometheus/prometheusrule.yaml $(CHART)/files/prometheus/

##@ Images

ALM_VERSION ?= 0.1.0

.PHONY: images
images: ## Build image archives bin/images/<name>-<version>.tar (alm, konnect-operator, gateway-config) without Docker.
	go run ./hack/images/cmd/images build --root . --out $(BIN)/images --alm-version $(ALM_VERSION)

.PHONY: push
push: ## Push every archive in bin/images under REGISTRY=<host/path> (docker config credentials).
	@if [ -z "$(REGISTRY)" ]; then echo "usage: make push REGISTRY=<host[:port]/path>"; exit 2; fi
	go run ./hack/images/cmd/images push --dir $(BIN)/images --registry $(REGISTRY)

##@ Test

.PHONY: test
test: tools images ## Run every test tier: unit, integration (local cluster) and e2e (real processes from bin/images).
	go test $(GO_TEST_FLAGS) ./...

# N and PKGS for test-repeat.
N    ?= 5
PKGS ?= ./controllers/... ./test/...

.PHONY: test-repeat
test-repeat: tools ## Run PKGS (default: the integration packages) N times (default 5); print each failing test and how often it failed.
	hack/test-repeat.sh $(N) $(PKGS)

CHAOS_REPORT := $(BIN)/chaos-report.jsonl
# The one file of measured figures: make bench and make test-chaos each replace their section (hack/measured).
MEASURED ?= docs/measured.md
STARTED  := $(shell date +%s)

.PHONY: test-chaos
test-chaos: tools images ## Kill ALM, restart kube-apiserver and break Konnect during installs, upgrades and syncs; print a table.
	@rm -f $(CHAOS_REPORT); touch $(CHAOS_REPORT); rc=0; \
	ALM_CHAOS=1 ALM_CHAOS_REPORT=$(CHAOS_REPORT) go test -count=1 -timeout 45m -v ./test/chaos/... 2>&1 \
		| tee $(BIN)/chaos.log | grep -E '^(--- |ok|FAIL|panic)' || rc=$$?; \
	echo; go run ./test/chaos/cmd/chaostable -measured $(MEASURED) -command "make test-chaos" -started $(STARTED) $(CHAOS_REPORT); \
	echo "(full output: $(BIN)/chaos.log)"; exit $$rc

.PHONY: test-e2e
test-e2e: tools ## Run only the end-to-end tests.
	go test $(GO_TEST_FLAGS) ./test/e2e/...

.PHONY: bench
BENCH     ?= .
BENCHPKGS ?= ./...
BENCH_COMMAND = make bench$(if $(filter-out .,$(BENCH)), BENCH='$(BENCH)')$(if $(filter-out ./...,$(BENCHPKGS)), BENCHPKGS='$(BENCHPKGS)')

bench: tools images ## Run the Go benchmarks and print one Markdown table (BENCH=regexp, BENCHPKGS=packages narrow them).
	go test -run '^$$' -bench '$(BENCH)' -benchmem -timeout 60m $(BENCHPKGS) 2>&1 | tee $(BIN)/bench.txt \
		| grep -E '^(Benchmark|ok|FAIL|--- |panic)'
	@echo; go run ./hack/benchtable/cmd/benchtable -measured $(MEASURED) -command "$(BENCH_COMMAND)" -started $(STARTED) \
		< $(BIN)/bench.txt; echo; echo "(full output: $(BIN)/bench.txt)"

.PHONY: bench-scale-10k
bench-scale-10k: ## BenchmarkScale10k alone (10,000 AppTypes in 1,000 namespaces; long), into its own section of docs/measured.md.
	ALM_SCALE_10K=1 $(MAKE) --no-print-directory bench BENCH=BenchmarkScale10k BENCHPKGS=./test/scale BENCH_COMMAND='make bench-scale-10k'

##@ Run

.PHONY: run
run: tools images ## The local environment and the story: a cluster with one real node, ALM from config/default, the Konnect simulator (ARGS='--help').
	go build -o $(BIN)/ ./cmd/almctl ./test/cmd/localenv
	$(BIN)/localenv $(ARGS)

##@ Tools (built from source, only when missing)

.PHONY: tools
tools: $(CONTROL_PLANE) $(NODE) $(CONTROLLER_GEN) $(OPM) ## Build the pinned cluster and node binaries, kubectl, generator, opm, promtool and helm; install runc and nft from Debian.

$(BIN)/kube-apiserver $(BIN)/kube-controller-manager $(BIN)/kubectl $(BIN)/kubelet $(BIN)/kube-proxy $(BIN)/kube-scheduler:
	cd hack/tools/kubernetes && go build -ldflags "$(KUBE_VERSION_LDFLAGS)" -o $(BIN)/ k8s.io/kubernetes/cmd/$(notdir $@)

# containerd as its release builds it without cgo (no btrfs, devmapper, zfs or aufs snapshotters: overlayfs only).
$(BIN)/containerd $(BIN)/containerd-shim-runc-v2:
	cd hack/tools/containerd && CGO_ENABLED=0 go build -tags no_btrfs,no_devmapper,no_zfs,no_aufs -o $@ \
		github.com/containerd/containerd/v2/cmd/$(notdir $@)

$(BIN)/cni/bridge $(BIN)/cni/host-local $(BIN)/cni/loopback:
	cd hack/tools/cni && CGO_ENABLED=0 go build -o $@ \
		github.com/containernetworking/plugins/plugins/$(if $(filter host-local,$(notdir $@)),ipam,main)/$(notdir $@)

# runc (the OCI runtime containerd's shim calls) and nft (kube-proxy's nftables mode, the bridge plugin's
# masquerading) are not Go modules one can pin here: Debian's packages.
/usr/sbin/runc /usr/sbin/nft:
	@command -v apt-get >/dev/null || { echo "$@ is missing: install runc and nftables with your package manager"; exit 1; }
	export DEBIAN_FRONTEND=noninteractive; apt-get install -y --no-install-recommends runc nftables \
		|| { apt-get update && apt-get install -y --no-install-recommends runc nftables; }

$(BIN)/etcd:
	cd hack/tools/etcd && go build -o $@ go.etcd.io/etcd/server/v3

$(CONTROLLER_GEN):
	cd hack/tools/controller-gen && go build -o $@ sigs.k8s.io/controller-tools/cmd/controller-gen

# opm, operator-registry's CLI, as upstream builds it (without sqlite's json1 tag: ALM reads no sqlite catalogs).
OPM_VERSION = $(shell cd hack/tools/opm && go list -m -f '{{.Version}}' github.com/operator-framework/operator-registry)
$(OPM):
	cd hack/tools/opm && go build -tags containers_image_openpgp \
		-ldflags "-X github.com/operator-framework/operator-registry/cmd/opm/version.opmVersion=$(OPM_VERSION)" \
		-o $@ github.com/operator-framework/operator-registry/cmd/opm

# The alert and chart tools (issue 37), prerequisites of tools on a line of their own.
PROMTOOL := $(BIN)/promtool
HELM     := $(BIN)/helm
tools: $(PROMTOOL) $(HELM)

# promtool, Prometheus's CLI: `promtool check rules` and `promtool test rules` on config/prometheus's alerts
# (test/promtool). Without the optional service discoveries (upstream's remove_all_sd tag): rule tests use none.
PROMTOOL_VERSION = $(shell cd hack/tools/promtool && go list -m -f '{{.Version}}' github.com/prometheus/prometheus)
$(PROMTOOL):
	cd hack/tools/promtool && go build -tags netgo,remove_all_sd \
		-ldflags "-X github.com/prometheus/common/version.Version=$(PROMTOOL_VERSION)" \
		-o $@ github.com/prometheus/prometheus/cmd/promtool

# helm, as upstream's Makefile builds it: its version, and the Kubernetes version `helm template` and `helm lint`
# assume (.Capabilities.KubeVersion) from the client-go it is built with (v0.X.Y: 1.X).
HELM_VERSION = $(shell cd hack/tools/helm && go list -m -f '{{.Version}}' helm.sh/helm/v3)
HELM_KUBE_MINOR = $(shell cd hack/tools/helm && go list -m -f '{{.Version}}' k8s.io/client-go | cut -d. -f2)
$(HELM):
	cd hack/tools/helm && go build -trimpath -ldflags "-X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) \
		-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$(HELM_KUBE_MINOR) \
		-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$(HELM_KUBE_MINOR)" \
		-o $@ helm.sh/helm/v3/cmd/helm

$(GOLANGCI_LINT):
	cd hack/tools/golangci-lint && go build -o $@ github.com/golangci/golangci-lint/v2/cmd/golangci-lint
