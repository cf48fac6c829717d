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
KUBE_VERSION_LDFLAGS := -X k8s.io/component-base/version.gitVersion=v1.35.1 \
	-X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=35

GO_TEST_FLAGS ?= -count=1

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-14s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: build
build: ## Build alm, almctl and konnect-operator into bin/.
	go build -o $(BIN)/ ./cmd/...

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
verify: generate manifests ## Regenerate code, manifests and bundles and fail if anything changed.
	@$(MAKE) --no-print-directory bundles >/dev/null
	@if [ -n "$$(git status --porcelain -- apis config bundles)" ]; then \
		echo "generated files are out of date; run 'make generate manifests bundles' and commit:"; \
		git status --porcelain -- apis config bundles; git --no-pager diff --stat -- apis config bundles; exit 1; fi

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
run: tools images ## The local environment and the story: control plane, ALM from config/default, node runner, Konnect simulator (ARGS='--help').
	go build -o $(BIN)/ ./cmd/almctl ./test/cmd/localenv
	$(BIN)/localenv $(ARGS)

##@ Tools (built from source, only when missing)

.PHONY: tools
tools: $(CONTROL_PLANE) $(CONTROLLER_GEN) $(OPM) ## Build the pinned cluster (etcd, kube-apiserver, kube-controller-manager), kubectl, generator and opm binaries.

$(BIN)/kube-apiserver $(BIN)/kube-controller-manager $(BIN)/kubectl:
	cd hack/tools/kubernetes && go build -ldflags "$(KUBE_VERSION_LDFLAGS)" -o $(BIN)/ k8s.io/kubernetes/cmd/$(notdir $@)

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

$(GOLANGCI_LINT):
	cd hack/tools/golangci-lint && go build -o $@ github.com/golangci/golangci-lint/v2/cmd/golangci-lint
