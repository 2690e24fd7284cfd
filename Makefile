# serializerd — build, run, test, bench. `make run` and `make test` install the
# Debian packages they need first (apt, as root or via sudo).
SWIFT        ?= swift
CONFIG       ?= config/serializerd.yaml
APT_PACKAGES := libevent-dev libcurl4-openssl-dev libxml2-dev pkg-config
BENCH_DATA   ?= ../shared/bench-data

.PHONY: all deps build release run test bench bench-proxy clean

all: build

deps:
	@command -v python3 >/dev/null 2>&1 || missing_py=python3; \
	missing="$$missing_py"; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product serializerd

run: release
	.build/release/serializerd serve --config $(CONFIG)

# One build of everything, then every test target from it.
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

# Pinned to core 1 when taskset exists: the machines are shared and noisy.
PIN := $(shell command -v taskset >/dev/null 2>&1 && echo "taskset -c 1")

bench: deps
	$(SWIFT) build -c release --product serializerd-bench
	$(PIN) .build/release/serializerd-bench --data $(BENCH_DATA) --out bench/results

# serializerd vs nginx as a reverse proxy (installs nginx-light and wrk if missing).
bench-proxy: deps
	@command -v nginx >/dev/null && command -v wrk >/dev/null || { \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq nginx-light wrk; }
	$(SWIFT) build -c release --product serializerd
	bench/proxy.sh

clean:
	rm -rf .build
