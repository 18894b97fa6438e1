# Magos: the front door. `make help` lists the targets.
SHELL := /usr/bin/env bash -o errexit -o pipefail -o nounset
.DEFAULT_GOAL := help

ROOT := $(CURDIR)
BIN := $(ROOT)/bin
export GOFLAGS ?= -buildvcs=false

# Versions of the real pieces the tests and the demo run.
KUBE_VERSION := $(shell sed -n 's/^\tk8s.io\/kubernetes v//p' tools/controlplane/kubernetes/go.mod)
KUBE_NEXT_VERSION := $(shell sed -n 's/^\tk8s.io\/kubernetes v//p' tools/controlplane/kubernetes-next/go.mod)
ETCD_VERSION := $(shell sed -n 's/^require go.etcd.io\/etcd\/server\/v3 v//p' tools/controlplane/etcd/go.mod)
TOFU_VERSION := 1.10.6
KYVERNO_VERSION := 1.19.1
FLUX_SOURCE_API_VERSION := 1.9.6
FLUX_HELM_API_VERSION := 1.6.5
# The Prometheus release whose promtool checks and unit-tests the alerting rules.
PROMETHEUS_VERSION := 0.316.0
# Flux on the real node (docs/real-node.md): the newest releases whose
# modules build with Go 1.26 (source-controller and kustomize-controller
# v1.10 need Go 1.27).
FLUX_SOURCE_CONTROLLER_VERSION := 1.9.6
FLUX_KUSTOMIZE_CONTROLLER_VERSION := 1.9.6
FLUX_CLI_VERSION := 2.9.5
# kube-router, whose firewall is the NetworkPolicy enforcer the real-node
# tier runs (kube-network-policies needs the kernel's nft queue, which this
# kind of machine lacks).
NETPOL_VERSION := 2.1.0

KUBE_ASSETS := $(BIN)/k8s
# kube_version_flags stamps a Kubernetes version into a binary (it reports it
# in --version and /version).
kube_version_flags = -X k8s.io/component-base/version.gitVersion=v$(1) \
	-X k8s.io/component-base/version.gitMajor=$(word 1,$(subst ., ,$(1))) \
	-X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(1)))
KUBE_NEXT_ASSETS := $(BIN)/k8s-next
ENGINES := $(BIN)/engines
TOFU := $(ENGINES)/opentofu/$(TOFU_VERSION)/tofu
# The magostest provider, in the filesystem mirror layout OpenTofu installs from
# (tools/testprovider/tofurc.tmpl is the CLI configuration that points there).
PROVIDERS := $(BIN)/providers
TESTPROVIDER_VERSION := 0.1.0
TESTPROVIDER_PLATFORM := $(shell go env GOOS)_$(shell go env GOARCH)
TESTPROVIDER := $(PROVIDERS)/registry.opentofu.org/magos/magostest/$(TESTPROVIDER_VERSION)/$(TESTPROVIDER_PLATFORM)/terraform-provider-magostest_v$(TESTPROVIDER_VERSION)
TESTPROVIDER_SOURCES := $(shell find tools/testprovider -name '*.go' ! -name '*_test.go')
CONTROLLER_GEN := $(BIN)/controller-gen
GOLANGCI_LINT := $(BIN)/golangci-lint
HELM := $(BIN)/helm
PROMTOOL := $(BIN)/promtool
PROMETHEUS := $(BIN)/prometheus
# helm's default Kubernetes version (for `helm template` and the charts'
# kubeVersion) is that of its client-go, as helm's own release builds set it.
HELM_KUBE_MINOR := $(shell sed -n 's/^\tk8s.io\/client-go v0\.\([0-9]*\)\..*/\1/p' tools/helm/go.mod)
HELM_KUBE_VERSION_FLAGS := $(foreach p,chartutil lint/rules,-X helm.sh/helm/v3/pkg/$(p).k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/$(p).k8sVersionMinor=$(HELM_KUBE_MINOR))

# The release: the charts' version/appVersion is the version of Magos, the
# tag of its images and, as v$(VERSION), its git tag (docs/installation.md).
CHART_APP_VERSION := $(shell sed -n 's/^appVersion: "\(.*\)"$$/\1/p' charts/magos/Chart.yaml)
VERSION := $(CHART_APP_VERSION)
IMAGE_REPOSITORY := ghcr.io/magos-dev
IMAGE_SOURCE := https://github.com/magos-dev/magos
REVISION := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
# Image creation and file times: the commit time, so one commit gives one digest.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
IMAGES := $(BIN)/images
# Static binaries that go into the images.
IMAGE_BINS := $(IMAGES)/bin
MAGOS_IMAGE := $(BIN)/magos-image
MAGOS_IMAGE_SOURCES := $(shell find tools/images -name '*.go' ! -name '*_test.go' ! -path '*/cmd/*') tools/images/go.mod tools/images/go.sum
STATIC_GO_BUILD := CGO_ENABLED=0 go build -trimpath
# The policy engine is always built without cgo: with it, the engine cannot
# sandbox every thread, and the workspace-controller refuses to start it.
POLICY_ENGINE_BUILD := CGO_ENABLED=0 go build
CONTROLLER_SOURCES := $(shell find apis controllers -name '*.go' ! -name '*_test.go') apis/go.mod controllers/go.mod controllers/go.sum
RUNNER_SOURCES := $(shell find apis runner -name '*.go' ! -name '*_test.go') runner/go.mod runner/go.sum
IMAGE_ARCHIVES = $(addprefix $(IMAGES)/,$(addsuffix -controller.tar,$(CONTROLLERS)) magos-runner.tar \
	magos-engine-opentofu-$(TOFU_VERSION).tar magos-pause.tar)
IMAGE_FLAGS = -source $(IMAGE_SOURCE) -revision $(REVISION) -created $(SOURCE_DATE_EPOCH)
# Terraform is BUSL-licensed: its engine image is only built on request, for the user's own registry.
TERRAFORM_VERSION ?=
TERRAFORM_SRC ?=
TERRAFORM_BINARY ?=

# Every Go module of the repository; tools modules are kept out of go.work.
WORK_MODULES := apis apis/client cli controllers runner tools/harness
TOOL_MODULES := tools tools/controlplane/kubernetes tools/controlplane/kubernetes-next tools/controlplane/etcd tools/testprovider tools/helm tools/images
MODULES := $(WORK_MODULES) $(TOOL_MODULES)
CONTROLLERS := workspace project rollout variableset workspaceset

GO_TEST_FLAGS ?= -count=1 -timeout=30m

# The real-node tier (tools/harness/realnode) runs where a node can: as root.
# There `make test` also builds the node binaries and installs the container
# runtime packages; elsewhere its tests skip, and under CI=true they fail.
KUBE_NODE := $(KUBE_ASSETS)/kube-node
# Flux's binaries carry their version in their name: a new version is a new build.
FLUX := $(BIN)/flux
FLUX_SOURCE_CONTROLLER := $(FLUX)/source-controller-$(FLUX_SOURCE_CONTROLLER_VERSION)
FLUX_KUSTOMIZE_CONTROLLER := $(FLUX)/kustomize-controller-$(FLUX_KUSTOMIZE_CONTROLLER_VERSION)
FLUX_CLI := $(FLUX)/flux-$(FLUX_CLI_VERSION)
FLUX_SOURCE_CONTROLLER_IMAGE := $(IMAGES)/flux/source-controller.tar
FLUX_KUSTOMIZE_CONTROLLER_IMAGE := $(IMAGES)/flux/kustomize-controller.tar
NETPOL := $(BIN)/netpol/kube-router-$(NETPOL_VERSION)
REALNODE_CAPABLE := $(shell [ "$$(id -u)" = 0 ] && echo yes)

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} \
		/^[a-zA-Z0-9_\/.-]+:.*?##/ { printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2 } \
		/^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Regenerate deepcopy, CRDs, RBAC, clients, third-party CRDs, API docs, docs/reasons.md, the decision tables of docs/architecture.md and the CLI's command lists of docs/cli.md and README.md, and the chart's versions, schemas, README and copies of the alerts and dashboards.
	cd apis && $(CONTROLLER_GEN) object:headerFile=../hack/boilerplate.go.txt paths=./...
	rm -f charts/magos-crds/crds/*.yaml
	cd apis && $(CONTROLLER_GEN) crd paths=./... output:crd:artifacts:config=../charts/magos-crds/crds
	rm -f charts/magos/files/crds/*.yaml && cp charts/magos-crds/crds/*.yaml charts/magos/files/crds/
	$(foreach c,$(CONTROLLERS),cd controllers && $(CONTROLLER_GEN) rbac:roleName=magos-$(c)-controller \
		paths=./internal/$(c)/... paths=./internal/setup/... output:rbac:artifacts:config=../deploy/rbac/$(c) && cd $(ROOT) && \
		cp deploy/rbac/$(c)/role.yaml charts/magos/charts/$(c)-controller/files/role.yaml;)
	$(MAKE) --no-print-directory chart-files
	bash hack/update-codegen.sh
	bash hack/update-thirdparty-crds.sh $(FLUX_SOURCE_API_VERSION) $(KYVERNO_VERSION) $(FLUX_HELM_API_VERSION)
	cd tools && GOWORK=off go run ./apidocs -out ../docs/api-reference.md ../apis/magos/v1alpha1
	cd apis && MAGOS_UPDATE_DOCS=1 go test -count=1 -run TestReasonsDoc ./magos/v1alpha1/ >/dev/null
	cd controllers && MAGOS_UPDATE_DOCS=1 go test -count=1 -run TestDecisionTableDoc ./internal/workspace/decide/ >/dev/null
	cd cli && MAGOS_UPDATE_DOCS=1 go test -count=1 -run 'TestCLIDocCommandList|TestREADMEStatusCLIRow' ./internal/command/ >/dev/null
	cd tools && GOWORK=off go run ./chartgen -root ..

.PHONY: chart-files
chart-files: ## Copy the alerting rules and Grafana dashboards into the magos chart (part of generate).
	cp deploy/prometheus/alerts.yaml charts/magos/files/alerts.yaml
	rm -rf charts/magos/files/dashboards && mkdir -p charts/magos/files/dashboards
	cp deploy/grafana/*.json charts/magos/files/dashboards/

.PHONY: verify
verify: generate tidy ## Regenerate everything and fail if the tree changed (generated code or go.mod/go.sum).
	@if [ -n "$$(git status --porcelain -- . )" ]; then \
		echo "Generated files or modules are out of date; run 'make generate tidy' and commit:"; \
		git status --porcelain; git --no-pager diff --stat; exit 1; fi
	@echo "verify: generated code and modules are up to date"

.PHONY: tidy
tidy: ## Run go mod tidy in every module.
	@for m in $(filter-out cli,$(MODULES)); do (cd $$m && GOWORK=off go mod tidy); done
	@# cli has no replace directive (go install needs none): tidy it with one to ../apis,
	@# then record in cli/go.sum the sums of apis as its release tag serves it.
	cd cli && go mod edit -replace=$(APIS_MODULE)=../apis && GOWORK=off go mod tidy; status=$$?; go mod edit -dropreplace=$(APIS_MODULE); exit $$status
	cd tools && GOWORK=off go run ./modproxy -root .. -tag apis/v$(VERSION) -gosum ../cli/go.sum ../apis

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint on every workspace module.
	@for m in $(WORK_MODULES); do echo "lint: $$m"; (cd $$m && $(GOLANGCI_LINT) run --allow-parallel-runners --config $(ROOT)/.golangci.yml ./...); done

.PHONY: build
build: ## Build the controller, runner and kubectl-magos binaries into bin/, check every module builds alone and that go install installs the CLI.
	cd controllers && go build -o $(BIN)/ $(addprefix ./,$(CONTROLLERS)) && $(POLICY_ENGINE_BUILD) -o $(BIN)/ ./policy-engine && ln -sf policy-engine $(BIN)/magos-policy-engine
	cd cli && go build -o $(BIN)/ ./kubectl-magos
	cd runner && go build -o $(BIN)/runner .
	@for m in $(filter-out cli,$(WORK_MODULES)) tools; do echo "build (GOWORK=off): $$m"; (cd $$m && GOWORK=off go build -o /dev/null ./...); done
	$(MAKE) --no-print-directory check-go-install

# The git tags of a release (docs/installation.md, "Versions and releases"):
# vX.Y.Z names the release; a module in a subdirectory gets version vX.Y.Z
# only from a tag <subdirectory>/vX.Y.Z, so go install needs apis/ and cli/.
RELEASE_TAGS = apis/v$(VERSION) cli/v$(VERSION) v$(VERSION)
# The CLI's module as a release tags it: apis and cli served from the
# working tree by a module proxy of files (tools/modproxy), under the
# versions a proxy derives from RELEASE_TAGS and nothing else.
APIS_MODULE := github.com/magos-dev/magos/apis
GO_INSTALL_PROXY := $(BIN)/goproxy

.PHONY: check-go-install
check-go-install: ## Check `go install github.com/magos-dev/magos/cli/kubectl-magos@vVERSION` works with no go.work, apis and cli served from this tree under the release's tags (apis/vVERSION, cli/vVERSION), with the committed cli/go.sum.
	cd tools && GOWORK=off go run ./modproxy -root .. -out $(GO_INSTALL_PROXY) $(addprefix -tag ,$(RELEASE_TAGS)) ../apis ../cli
	bash hack/check-go-install.sh $(GO_INSTALL_PROXY) v$(VERSION)

.PHONY: release-tags
release-tags: ## Print the git commands that tag a release at HEAD, apis first (docs/installation.md).
	@printf 'git tag -a %s -m "Magos $(VERSION)"\n' $(RELEASE_TAGS)
	@echo "git push origin $(RELEASE_TAGS)"

##@ Testing

.PHONY: test
test: tools images browser $(if $(REALNODE_CAPABLE),node images-next) ## Run every test against the local control plane (with the images built), and on a real node where the machine can run one.
	$(MAKE) --no-print-directory release CLI_PLATFORMS=$(HOST_PLATFORM)
	MAGOS_RELEASE_DIR=$(RELEASE_DIR) MAGOS_KUBE_VERSION=v$(KUBE_VERSION) go test $(GO_TEST_FLAGS) $(addprefix ./,$(addsuffix /...,$(WORK_MODULES)))
	cd tools/testprovider && GOWORK=off go test $(GO_TEST_FLAGS) ./...
	cd tools && GOWORK=off go test $(GO_TEST_FLAGS) $(TOOLS_TEST_PACKAGES)
	$(TEST_IMAGES)

.PHONY: test-unit
test-unit: ## Run the pure tests of every Go module (-short): no control plane and nothing from bin/ needed; tests that need them skip.
	go test -short $(GO_TEST_FLAGS) $(addprefix ./,$(addsuffix /...,$(WORK_MODULES)))
	cd tools/testprovider && GOWORK=off go test -short $(GO_TEST_FLAGS) ./...
	cd tools/images && GOWORK=off go test -short $(GO_TEST_FLAGS) ./...
	cd tools && GOWORK=off go test -short $(GO_TEST_FLAGS) $(TOOLS_TEST_PACKAGES)

# The tools module's own tests (the release's version stamping and module proxy).
TOOLS_TEST_PACKAGES := ./chartgen ./modproxy

.PHONY: test-images
test-images: images $(HELM) ## Test the image builder, and inspect and run the images `make images` wrote and the release `make release` writes (its CLI for this platform only).
	$(MAKE) --no-print-directory release CLI_PLATFORMS=$(HOST_PLATFORM)
	$(TEST_IMAGES)

# The image builder's tests over the images and the release (make test runs
# them after the release it made for the real-node tier's install).
TEST_IMAGES = cd tools/images && MAGOS_IMAGES_DIR=$(IMAGES) MAGOS_RELEASE_DIR=$(RELEASE_DIR) GOWORK=off go test $(GO_TEST_FLAGS) ./...

.PHONY: test-compat
test-compat: tools $(KUBE_NEXT_ASSETS)/kube-apiserver ## Run the controller tests against the next Kubernetes minor's kube-apiserver.
	MAGOS_KUBE_APISERVER_DIR=$(KUBE_NEXT_ASSETS) MAGOS_KUBE_VERSION=v$(KUBE_NEXT_VERSION) go test $(GO_TEST_FLAGS) ./controllers/...

.PHONY: e2e
e2e: tools ## Run only the end-to-end tests (binaries as processes).
	go test $(GO_TEST_FLAGS) ./controllers/e2e/...

.PHONY: bench
bench: tools ## Run the benchmarks and print their figures (those on a real node: `make bench-node`).
	go test -run='^$$' -bench=. -skip='OnTheNode' -benchmem $(addprefix ./,$(addsuffix /...,$(WORK_MODULES)))

.PHONY: bench-node
bench-node: tools images node ## Print the figures on a real node, as root: the run cost (BenchmarkRevisionOnTheNode, what a kubelet adds to `make bench`'s) and 100 Workspaces at once (BenchmarkLoadOnTheNode).
	MAGOS_KUBE_VERSION=v$(KUBE_VERSION) go test -count=1 -timeout=60m -run='^$$' -bench='^BenchmarkRevisionOnTheNode$$' -benchtime=3x ./controllers/e2e/realnode/
	MAGOS_KUBE_VERSION=v$(KUBE_VERSION) go test -count=1 -timeout=60m -run='^$$' -bench='^BenchmarkLoadOnTheNode$$' -benchtime=1x ./controllers/e2e/realnode/

# Workspaces BenchmarkScale creates; MAGOS_SCALE_WORKSPACES=500 for a quick run.
MAGOS_SCALE_WORKSPACES ?= 10000

.PHONY: bench-scale
bench-scale: tools ## Print the scale figures: the workspace-controller over MAGOS_SCALE_WORKSPACES (10000) Workspaces with simulated runs (not part of test or bench).
	MAGOS_BENCH_SCALE=1 MAGOS_SCALE_WORKSPACES=$(MAGOS_SCALE_WORKSPACES) go test -count=1 -timeout=6h -run='^$$' -bench='^BenchmarkScale$$' -benchtime=1x ./controllers/e2e/
	go test -count=1 -run='^$$' -bench='^BenchmarkDrain$$' -benchtime=3x ./controllers/internal/runqueue/

##@ Local control plane

.PHONY: tools
# The tools the demo needs, and what the tests need on top of them.
DEMO_TOOLS := $(KUBE_ASSETS)/kube-apiserver $(KUBE_ASSETS)/etcd $(KUBE_ASSETS)/kubectl $(TOFU)
TEST_TOOLS := $(DEMO_TOOLS) $(TESTPROVIDER) $(HELM) $(PROMTOOL) $(FLUX_SOURCE_CONTROLLER)
# Tool builds run two at a time: each go build is parallel inside, but its
# link and dependency-resolution steps are not, so two overlap well on 2 cores.
TOOL_JOBS ?= 2

tools: ## Build kube-apiserver, etcd, kubectl, OpenTofu, helm, promtool, the test provider and Flux's source-controller into bin/ (cached).
	@$(MAKE) --no-print-directory -j$(TOOL_JOBS) $(TEST_TOOLS)

# Static (CGO_ENABLED=0) like kube-node below, so the three builds of the
# k8s.io/kubernetes wrapper module share one build cache.
$(KUBE_ASSETS)/kube-apiserver $(KUBE_ASSETS)/kubectl: $(KUBE_ASSETS)/%: tools/controlplane/kubernetes/go.mod tools/controlplane/kubernetes/cmd/%/main.go
	@echo "Building $* v$(KUBE_VERSION) (the first kube-apiserver build takes ~5 minutes)"
	cd tools/controlplane/kubernetes && CGO_ENABLED=0 GOWORK=off go build -trimpath -ldflags "-s -w $(call kube_version_flags,$(KUBE_VERSION))" -o $@.tmp ./cmd/$* && mv $@.tmp $@

# kubectl shares most packages with kube-apiserver: building it after
# kube-apiserver reuses the build cache instead of compiling them twice.
$(KUBE_ASSETS)/kubectl: | $(KUBE_ASSETS)/kube-apiserver

$(KUBE_NEXT_ASSETS)/kube-apiserver: tools/controlplane/kubernetes-next/go.mod tools/controlplane/kubernetes-next/cmd/kube-apiserver/main.go
	@echo "Building kube-apiserver v$(KUBE_NEXT_VERSION) for the compatibility run"
	cd tools/controlplane/kubernetes-next && GOWORK=off go build -trimpath -ldflags "-s -w $(call kube_version_flags,$(KUBE_NEXT_VERSION))" -o $@.tmp ./cmd/kube-apiserver && mv $@.tmp $@

$(KUBE_ASSETS)/etcd: tools/controlplane/etcd/go.mod tools/controlplane/etcd/main.go
	@echo "Building etcd v$(ETCD_VERSION)"
	cd tools/controlplane/etcd && GOWORK=off go build -trimpath -ldflags "-s -w" -o $@.tmp . && mv $@.tmp $@

$(TOFU):
	@echo "Building OpenTofu v$(TOFU_VERSION) from its Go module (~2 minutes)"
	@mkdir -p $(dir $@)
	dir=$$(GOWORK=off GOFLAGS=-mod=mod go mod download -json github.com/opentofu/opentofu@v$(TOFU_VERSION) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
		cd $$dir && GOWORK=off CGO_ENABLED=0 go build -trimpath \
		-ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" -o $@.tmp ./cmd/tofu && mv $@.tmp $@

.PHONY: testprovider
testprovider: $(TESTPROVIDER) ## Build the magostest provider into the filesystem mirror bin/providers (see tools/testprovider/README.md).

$(TESTPROVIDER): tools/testprovider/go.mod tools/testprovider/go.sum $(TESTPROVIDER_SOURCES)
	@echo "Building the magostest provider v$(TESTPROVIDER_VERSION) into $(PROVIDERS)"
	@mkdir -p $(dir $@)
	cd tools/testprovider && GOWORK=off go build -trimpath -ldflags "-s -w" -o $@.tmp . && mv $@.tmp $@

$(HELM): tools/helm/go.mod
	@echo "Building helm (the chart tests render and lint charts/ with it)"
	cd tools/helm && GOWORK=off go build -trimpath -ldflags "-s -w $(HELM_KUBE_VERSION_FLAGS)" -o $@.tmp helm.sh/helm/v3/cmd/helm && mv $@.tmp $@

$(PROMTOOL):
	@echo "Building promtool from Prometheus v$(PROMETHEUS_VERSION)'s Go module (the alert rule tests run it; without the service-discovery plugins promtool does not need)"
	@mkdir -p $(dir $@)
	dir=$$(GOWORK=off GOFLAGS=-mod=mod go mod download -json github.com/prometheus/prometheus@v$(PROMETHEUS_VERSION) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
		cd $$dir && GOWORK=off CGO_ENABLED=0 go build -trimpath -tags remove_all_sd -ldflags "-s -w" -o $@.tmp ./cmd/promtool && mv $@.tmp $@

$(PROMETHEUS):
	@echo "Building the Prometheus server v$(PROMETHEUS_VERSION) from its Go module (the real-node tier scrapes the controllers with it; static targets only, no service-discovery plugins)"
	@mkdir -p $(dir $@)
	dir=$$(GOWORK=off GOFLAGS=-mod=mod go mod download -json github.com/prometheus/prometheus@v$(PROMETHEUS_VERSION) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
		cd $$dir && GOWORK=off CGO_ENABLED=0 go build -trimpath -tags remove_all_sd -ldflags "-s -w" -o $@.tmp ./cmd/prometheus && mv $@.tmp $@

$(CONTROLLER_GEN): tools/go.mod
	cd tools && GOWORK=off go build -o $(BIN)/ sigs.k8s.io/controller-tools/cmd/controller-gen

$(GOLANGCI_LINT): tools/go.mod
	cd tools && GOWORK=off go build -o $(BIN)/ github.com/golangci/golangci-lint/v2/cmd/golangci-lint

##@ Real node

.PHONY: node
node: node-packages $(KUBE_NODE) $(FLUX_SOURCE_CONTROLLER_IMAGE) $(FLUX_KUSTOMIZE_CONTROLLER_IMAGE) $(FLUX_CLI) $(NETPOL) $(PROMETHEUS) ## Build kubelet, kube-controller-manager, kube-scheduler, kube-proxy (one binary), Flux's source-controller and kustomize-controller images and CLI, kube-router (the NetworkPolicy enforcer) and Prometheus, and install containerd, runc, CNI plugins, iptables, ipset.

.PHONY: browser
browser: ## Install Chromium from Debian for the UI's browser tests (root only).
	bash hack/install-browser.sh

.PHONY: node-packages
node-packages: ## Install the Debian packages of the real-node tier (containerd, runc, CNI plugins, iptables; root only).
	bash hack/install-node-packages.sh

# One multi-call binary for the four node components: they share most of
# their packages, so one link instead of four. `kube-node kubelet ...`.
# It shares the build cache with kube-apiserver, so it is built after it.
$(KUBE_NODE): tools/controlplane/kubernetes/go.mod tools/controlplane/kubernetes/cmd/kube-node/main.go | $(KUBE_ASSETS)/kube-apiserver
	@echo "Building kubelet, kube-controller-manager, kube-scheduler and kube-proxy v$(KUBE_VERSION) as $@ (the first build takes minutes)"
	cd tools/controlplane/kubernetes && CGO_ENABLED=0 GOWORK=off go build -trimpath -ldflags "-s -w $(call kube_version_flags,$(KUBE_VERSION))" -o $@.tmp ./cmd/kube-node && mv $@.tmp $@

# Flux's controllers and CLI, built from their Go modules (their go.mod
# replaces ./api, a directory their zips do not hold: hack/build-go-module.sh
# builds in a writable copy without it). The proxy here does not serve
# github.com/fluxcd/pkg/artifact v0.18.3, which source-controller v1.9.6
# requires; v0.18.0 is the nearest it does. flux2's embedded install
# manifests are generated by its own make from release downloads: the CLI
# is built with none (`flux install` cannot run; every other command can).
.PHONY: flux
flux: $(FLUX_SOURCE_CONTROLLER) $(FLUX_SOURCE_CONTROLLER_IMAGE) $(FLUX_KUSTOMIZE_CONTROLLER) $(FLUX_KUSTOMIZE_CONTROLLER_IMAGE) $(FLUX_CLI) ## Build Flux's source-controller and kustomize-controller (and their images) and the flux CLI into bin/flux (the real-node tier runs all three).

$(FLUX_SOURCE_CONTROLLER):
	@echo "Building Flux source-controller v$(FLUX_SOURCE_CONTROLLER_VERSION) from its Go module (minutes)"
	bash hack/build-go-module.sh -pin github.com/fluxcd/pkg/artifact=github.com/fluxcd/pkg/artifact@v0.18.0 \
		github.com/fluxcd/source-controller@v$(FLUX_SOURCE_CONTROLLER_VERSION) . $@

$(FLUX_KUSTOMIZE_CONTROLLER):
	@echo "Building Flux kustomize-controller v$(FLUX_KUSTOMIZE_CONTROLLER_VERSION) from its Go module"
	bash hack/build-go-module.sh github.com/fluxcd/kustomize-controller@v$(FLUX_KUSTOMIZE_CONTROLLER_VERSION) . $@

$(FLUX_CLI):
	@echo "Building the flux CLI v$(FLUX_CLI_VERSION) from its Go module"
	bash hack/build-go-module.sh -touch cmd/flux/manifests/none.yaml \
		github.com/fluxcd/flux2/v2@v$(FLUX_CLI_VERSION) ./cmd/flux $@ "-X main.VERSION=$(FLUX_CLI_VERSION)"

# source-controller's image, for the real-node tier only (never pushed): as
# Flux's, its user is non-root and it writes only its emptyDir volumes.
$(FLUX_SOURCE_CONTROLLER_IMAGE): $(FLUX_SOURCE_CONTROLLER) $(MAGOS_IMAGE)
	$(MAGOS_IMAGE) build -ref magos.test/fluxcd/source-controller:v$(FLUX_SOURCE_CONTROLLER_VERSION) -out $@ \
		-version $(FLUX_SOURCE_CONTROLLER_VERSION) -source https://github.com/fluxcd/source-controller \
		-revision v$(FLUX_SOURCE_CONTROLLER_VERSION) -created 0 \
		-file $<=/usr/local/bin/source-controller -entrypoint /usr/local/bin/source-controller

# kube-router, run by the real-node tier only as a NetworkPolicy enforcer
# (its firewall: iptables and ipsets in the node's network namespace).
$(NETPOL):
	@echo "Building kube-router v$(NETPOL_VERSION) from its Go module"
	bash hack/build-go-module.sh github.com/cloudnativelabs/kube-router/v2@v$(NETPOL_VERSION) ./cmd/kube-router $@

# kustomize-controller's image, for the real-node tier only (never pushed).
$(FLUX_KUSTOMIZE_CONTROLLER_IMAGE): $(FLUX_KUSTOMIZE_CONTROLLER) $(MAGOS_IMAGE)
	$(MAGOS_IMAGE) build -ref magos.test/fluxcd/kustomize-controller:v$(FLUX_KUSTOMIZE_CONTROLLER_VERSION) -out $@ \
		-version $(FLUX_KUSTOMIZE_CONTROLLER_VERSION) -source https://github.com/fluxcd/kustomize-controller \
		-revision v$(FLUX_KUSTOMIZE_CONTROLLER_VERSION) -created 0 \
		-file $<=/usr/local/bin/kustomize-controller -entrypoint /usr/local/bin/kustomize-controller

##@ Images and release

.PHONY: images
images: $(IMAGE_ARCHIVES) ## Build every image as an OCI archive bin/images/<name>.tar (no container engine needed).

# The next version's controller and runner images (VERSION-next, built from
# the same commit): the real-node tier upgrades a Flux install of VERSION
# to them while Workspaces are applied.
NEXT_IMAGES := $(BIN)/images-next
.PHONY: images-next
images-next: ## Build the controller and runner images as version VERSION-next into bin/images-next (the real-node upgrade test).
	@$(MAKE) --no-print-directory IMAGES=$(NEXT_IMAGES) VERSION=$(VERSION)-next \
		$(addprefix $(NEXT_IMAGES)/,$(addsuffix -controller.tar,$(CONTROLLERS)) magos-runner.tar)

.PHONY: image-pause image-runner image-engine-opentofu $(addprefix image-,$(addsuffix -controller,$(CONTROLLERS)))
image-pause: $(IMAGES)/magos-pause.tar ## Build only the pause (sandbox) image.
image-runner: $(IMAGES)/magos-runner.tar ## Build only the runner image.
image-engine-opentofu: $(IMAGES)/magos-engine-opentofu-$(TOFU_VERSION).tar ## Build only the OpenTofu engine image.
$(addprefix image-,$(addsuffix -controller,$(CONTROLLERS))): image-%: $(IMAGES)/%.tar

.PHONY: helm
helm: $(HELM) ## Build bin/helm, the helm `make push` and `make release` package and push the charts with (and `bin/helm registry login` logs in with).

.PHONY: push
push: images $(HELM) ## Push the images and both charts to REGISTRY=host[/prefix] (PLAIN_HTTP=1 for a local HTTP registry).
	@if [ -z "$(REGISTRY)" ]; then echo "usage: make push REGISTRY=host[/prefix] (e.g. ghcr.io/magos-dev)"; exit 2; fi
	$(MAGOS_IMAGE) push -registry $(REGISTRY) $(if $(PLAIN_HTTP),-plain-http) -helm $(HELM) \
		-chart charts/magos-crds -chart charts/magos $(IMAGE_ARCHIVES)

# What `make release` writes, and for which platforms it builds the CLI.
RELEASE_DIR = $(BIN)/release/$(VERSION)
CLI_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
# This machine's platform: the tests' release builds the CLI for it only.
HOST_PLATFORM := $(shell go env GOOS)/$(shell go env GOARCH)

.PHONY: release
release: images $(HELM) $(MAGOS_IMAGE) ## Write a release to bin/release/VERSION: images (+ SPDX SBOMs), charts, kubectl-magos per platform, install manifests (REGISTRY=host[/prefix]: naming the images there, where `make push` puts them), SHA256SUMS.
	@if [ "$(VERSION)" != "$(CHART_APP_VERSION)" ]; then \
		echo "VERSION=$(VERSION) is not charts/magos appVersion $(CHART_APP_VERSION): set appVersion, run make generate and commit (docs/installation.md)"; exit 2; fi
	rm -rf $(RELEASE_DIR) && mkdir -p $(RELEASE_DIR)/images $(RELEASE_DIR)/charts $(RELEASE_DIR)/cli $(RELEASE_DIR)/manifests
	cp $(IMAGE_ARCHIVES) $(RELEASE_DIR)/images/
	$(MAGOS_IMAGE) sbom $(RELEASE_DIR)/images/*.tar
	$(HELM) package charts/magos-crds charts/magos -d $(RELEASE_DIR)/charts
	cd cli && for p in $(CLI_PLATFORMS); do \
		GOOS=$${p%/*} GOARCH=$${p#*/} $(STATIC_GO_BUILD) -ldflags "-s -w -X github.com/magos-dev/magos/cli/internal/command.Version=$(VERSION)" \
			-o $(RELEASE_DIR)/cli/kubectl-magos_$(VERSION)_$${p%/*}_$${p#*/} ./kubectl-magos || exit 1; done
	@# The policy engine kubectl magos policy test runs (the workspace-controller image's, for this platform).
	cd controllers && for p in $(CLI_PLATFORMS); do out=$(RELEASE_DIR)/cli/magos-policy-engine_$(VERSION)_$${p%/*}_$${p#*/}; \
		if [ "$$p" = "$(HOST_PLATFORM)" ]; then cp $(IMAGE_BINS)/policy-engine $$out; \
		else GOOS=$${p%/*} GOARCH=$${p#*/} $(STATIC_GO_BUILD) -ldflags "-s -w" -o $$out ./policy-engine || exit 1; fi; done
	cat charts/magos-crds/crds/*.yaml > $(RELEASE_DIR)/manifests/crds.yaml
	@# The manifests name the images where `make push REGISTRY=…` puts them (the chart's default without REGISTRY).
	$(HELM) template magos charts/magos --namespace magos-system --kube-version $(KUBE_VERSION) \
		$(if $(REGISTRY),--set global.image.repository=$(REGISTRY)) > $(RELEASE_DIR)/manifests/magos.yaml
	cd $(RELEASE_DIR) && find . -type f ! -name SHA256SUMS | LC_ALL=C sort | xargs sha256sum > SHA256SUMS
	@echo "Release $(VERSION) in $(RELEASE_DIR)"

.PHONY: image-engine-terraform
image-engine-terraform: $(MAGOS_IMAGE) $(IMAGE_BINS)/engine-install ## Build a Terraform engine image for your own registry (BUSL: see docs/installation.md; never built or pushed by default).
	@if [ -z "$(TERRAFORM_VERSION)" ] || [ -z "$(TERRAFORM_SRC)$(TERRAFORM_BINARY)" ]; then \
		echo "usage: make image-engine-terraform TERRAFORM_VERSION=x.y.z TERRAFORM_SRC=<checkout of github.com/hashicorp/terraform at vx.y.z>"; \
		echo "   or: make image-engine-terraform TERRAFORM_VERSION=x.y.z TERRAFORM_BINARY=<static terraform binary>"; exit 2; fi
	@mkdir -p $(IMAGE_BINS)
	$(if $(TERRAFORM_BINARY),cp $(TERRAFORM_BINARY) $(IMAGE_BINS)/terraform-$(TERRAFORM_VERSION),\
		cd $(TERRAFORM_SRC) && GOWORK=off $(STATIC_GO_BUILD) -ldflags "-s -w" -o $(IMAGE_BINS)/terraform-$(TERRAFORM_VERSION) .)
	$(MAGOS_IMAGE) build -ref $(IMAGE_REPOSITORY)/magos-engine-terraform:$(TERRAFORM_VERSION) \
		-out $(IMAGES)/terraform/magos-engine-terraform-$(TERRAFORM_VERSION).tar $(IMAGE_FLAGS) -version $(TERRAFORM_VERSION) \
		-file $(IMAGE_BINS)/terraform-$(TERRAFORM_VERSION)=/engine/terraform -file $(IMAGE_BINS)/engine-install=/engine/install \
		-entrypoint "/engine/install -engine=terraform -version=$(TERRAFORM_VERSION) -binary=/engine/terraform" \
		-label dev.magos.engine=terraform -label dev.magos.engine.version=$(TERRAFORM_VERSION) -label org.opencontainers.image.licenses=BUSL-1.1

# The archives carry the commit as a label: rebuild them when it changes.
$(IMAGES)/.revision: FORCE
	@mkdir -p $(@D)
	@echo "$(REVISION) $(SOURCE_DATE_EPOCH) $(VERSION)" | cmp -s - $@ || echo "$(REVISION) $(SOURCE_DATE_EPOCH) $(VERSION)" > $@

.PHONY: FORCE
FORCE:

$(MAGOS_IMAGE): $(MAGOS_IMAGE_SOURCES)
	cd tools/images && GOWORK=off go build -o $@ .

$(IMAGES)/%-controller.tar: $(IMAGE_BINS)/%-controller $(MAGOS_IMAGE) $(IMAGES)/.revision
	$(MAGOS_IMAGE) build -ref $(IMAGE_REPOSITORY)/$*-controller:$(VERSION) -out $@ $(IMAGE_FLAGS) -version $(VERSION) \
		-file $<=/usr/local/bin/$*-controller $(CONTROLLER_IMAGE_FILES_$*) -entrypoint /usr/local/bin/$*-controller

# The workspace-controller starts the policy engine, next to its own binary,
# the first time a plan has policies to pass.
CONTROLLER_IMAGE_FILES_workspace = -file $(IMAGE_BINS)/policy-engine=/usr/local/bin/policy-engine
$(IMAGES)/workspace-controller.tar: $(IMAGE_BINS)/policy-engine

# The runner image: the runner, and git and ssh (with their libraries) for
# git:: module sources, with a git-submodule of ours (the image has no shell).
$(IMAGES)/magos-runner.tar: $(IMAGE_BINS)/runner $(IMAGE_BINS)/git-submodule $(MAGOS_IMAGE) $(IMAGES)/.revision hack/runner-git-files.sh | node-packages
	bash hack/runner-git-files.sh > $@.files
	$(MAGOS_IMAGE) build -ref $(IMAGE_REPOSITORY)/magos-runner:$(VERSION) -out $@ $(IMAGE_FLAGS) -version $(VERSION) \
		-file $<=/usr/local/bin/runner $$(cat $@.files) -file $(IMAGE_BINS)/git-submodule=/usr/lib/git-core/git-submodule \
		-env PATH=/usr/local/bin:/usr/bin:/bin -entrypoint /usr/local/bin/runner
	rm -f $@.files

# The engine image: the engine binary and the installer the runner Job's
# init container runs (apis/magos/v1alpha1/engine_image.go).
$(IMAGES)/magos-engine-opentofu-$(TOFU_VERSION).tar: $(TOFU) $(IMAGE_BINS)/engine-install $(MAGOS_IMAGE) $(IMAGES)/.revision
	$(MAGOS_IMAGE) build -ref $(IMAGE_REPOSITORY)/magos-engine-opentofu:$(TOFU_VERSION) -out $@ $(IMAGE_FLAGS) -version $(TOFU_VERSION) \
		-file $(TOFU)=/engine/tofu -file $(IMAGE_BINS)/engine-install=/engine/install \
		-entrypoint "/engine/install -engine=opentofu -version=$(TOFU_VERSION) -binary=/engine/tofu" \
		-label dev.magos.engine=opentofu -label dev.magos.engine.version=$(TOFU_VERSION)

$(IMAGES)/magos-pause.tar: $(IMAGE_BINS)/pause $(MAGOS_IMAGE) $(IMAGES)/.revision
	$(MAGOS_IMAGE) build -ref $(IMAGE_REPOSITORY)/magos-pause:$(VERSION) -out $@ $(IMAGE_FLAGS) -version $(VERSION) \
		-file $<=/pause -entrypoint /pause

$(IMAGE_BINS)/%-controller: $(CONTROLLER_SOURCES)
	cd controllers && $(STATIC_GO_BUILD) -ldflags "-s -w -X github.com/magos-dev/magos/controllers/internal/setup.Version=$(VERSION)" -o $@.tmp ./$* && mv $@.tmp $@

$(IMAGE_BINS)/policy-engine: $(CONTROLLER_SOURCES)
	cd controllers && $(STATIC_GO_BUILD) -ldflags "-s -w" -o $@.tmp ./policy-engine && mv $@.tmp $@

$(IMAGE_BINS)/runner: $(RUNNER_SOURCES)
	cd runner && $(STATIC_GO_BUILD) -ldflags "-s -w -X main.version=$(VERSION)" -o $@.tmp . && mv $@.tmp $@

$(IMAGE_BINS)/pause: tools/images/cmd/pause/main.go tools/images/go.mod
	cd tools/images && GOWORK=off $(STATIC_GO_BUILD) -ldflags "-s -w -X main.version=$(VERSION)" -o $@.tmp ./cmd/pause && mv $@.tmp $@

# The programs that ship beside the runner: git-submodule in the runner
# image, engine-install as every engine image's entrypoint.
$(IMAGE_BINS)/engine-install $(IMAGE_BINS)/git-submodule: $(IMAGE_BINS)/%: runner/cmd/%/main.go runner/go.mod
	cd runner && GOWORK=off $(STATIC_GO_BUILD) -ldflags "-s -w" -o $@.tmp ./cmd/$* && mv $@.tmp $@

##@ Demo

.PHONY: demo
demo: ## Start a local control plane with the five controllers and apply deploy/examples.
	@$(MAKE) --no-print-directory -j$(TOOL_JOBS) $(DEMO_TOOLS) demo-binaries
	bash hack/demo.sh

# The demo's own programs build beside the tools (cold, the module downloads
# and links of one overlap the compiles of the other), in one static build
# without symbols: the policy engine's CGO_ENABLED=0 build and the others'
# then compile the packages they share (client-go, controller-runtime, ...)
# once, not twice, and the e2e tests' builds (static too) find them cached.
.PHONY: demo-binaries
demo-binaries:
	CGO_ENABLED=0 go build -ldflags "-s -w" -o $(BIN)/ $(addprefix ./controllers/,$(CONTROLLERS)) ./controllers/policy-engine ./cli/kubectl-magos ./runner ./tools/harness/cmd/localcp ./tools/harness/cmd/executor ./tools/harness/cmd/localsource
	ln -sf policy-engine $(BIN)/magos-policy-engine

.PHONY: demo-stop
demo-stop: ## Stop what `make demo` started.
	bash hack/demo-stop.sh

.PHONY: clean
clean: ## Remove built binaries (keeps the cached control plane and engines).
	rm -f $(BIN)/runner $(BIN)/kubectl-magos $(BIN)/policy-engine $(BIN)/magos-policy-engine $(addprefix $(BIN)/,$(CONTROLLERS))
	rm -rf $(IMAGES)
