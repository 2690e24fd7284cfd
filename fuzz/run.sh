#!/usr/bin/env bash
# Builds every libFuzzer target under fuzz/ (one directory each: main.swift, `sources`
# naming the product files it tests, optional `flags` for the compiler, optional `dict` of
# tokens for libFuzzer, corpus/) and runs
# each for SECONDS. HTTPCore and Serializers are built once as modules the targets may
# import (a target's `flags` links them).
#   fuzz/run.sh [SECONDS] [TARGET...]      default: 30 s, every target
# Memory limits make an amplification a finding rather than a slow run; an input that
# takes over 1 s is a finding too. Crashes land in fuzz/<target>/findings/; keep each
# as a regression fixture in its corpus once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for dir in fuzz/*/; do [ -f "$dir/main.swift" ] && targets+=("$(basename "$dir")"); done
fi
mkdir -p .build/fuzz/modules
modules=.build/fuzz/modules
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name HTTPCore -emit-module \
  -emit-module-path "$modules/HTTPCore.swiftmodule" -emit-library -static -o "$modules/libHTTPCore.a" Sources/HTTPCore/*.swift
# The contract's C kernels (schema walk, shape fingerprint), for the targets that link the
# contracts (-lCSchema), and for the JSON kernel, which checks a contract as it goes.
mkdir -p "$modules/cschema"
for source in Sources/CSchema/*.c; do
  clang -O2 -g -fsanitize=address,fuzzer-no-link -I Sources/CSchema/include -c "$source" -o "$modules/cschema/$(basename "$source" .c).o"
done
rm -f "$modules/libCSchema.a"
ar rcs "$modules/libCSchema.a" "$modules"/cschema/*.o
# The JSON kernel (C), instrumented like the Swift code; linked into every target.
for source in Sources/CVector/*.c; do
  clang -O2 -g -fsanitize=address,fuzzer-no-link -I Sources/CVector/include -I Sources/CSchema/include -c "$source" \
    -o "$modules/$(basename "$source" .c).o"
done
rm -f "$modules/libCVector.a"
ar rcs "$modules/libCVector.a" "$modules"/*.o "$modules"/cschema/*.o
# RE2's C interface (C++), for the targets that link the contracts (-lCRE2 -lre2 -lstdc++).
mkdir -p "$modules/cre2"
clang++ -O2 -g -fsanitize=address,fuzzer-no-link -I Sources/CRE2/include -c Sources/CRE2/regex.cpp -o "$modules/cre2/regex.o"
rm -f "$modules/libCRE2.a"
ar rcs "$modules/libCRE2.a" "$modules/cre2/regex.o"
# The serializers, built once for every target that tests them (a target's `flags` says
# -lSerializers), with -enable-testing so that its main.swift may `@testable import` them.
serializer_flags=(-I Sources/CLibxml2 -I Sources/CPages/include -I Sources/CVector/include -I Sources/CSchema/include
  -Xcc -I/usr/include/libxml2)
swiftc -O -sanitize=fuzzer,address -Xcc -fsanitize=address -parse-as-library -enable-testing -module-name Serializers -emit-module \
  -emit-module-path "$modules/Serializers.swiftmodule" -emit-library -static -o "$modules/libSerializers.a" -I "$modules" \
  "${serializer_flags[@]}" Sources/Serializers/*.swift Sources/Serializers/*/*.swift Sources/Serializers/*/*/*.swift \
  2>&1 | grep -v "Cannot export local symbol" || true
[ -f "$modules/libSerializers.a" ] || { echo "fuzz: the Serializers module did not build" >&2; exit 1; }
# One target: build it, run it for SECONDS, keep a crash in findings/. Its output goes to
# .build/fuzz/<target>.log; the exit status says whether it passed.
one() {
  local target=$1
  local dir="fuzz/$target"
  local binary=".build/fuzz/$target"
  local flags=""
  [ -f "$dir/flags" ] && flags="$(cat "$dir/flags")"
  rm -f "$binary"
  # -Xcc -fsanitize=address: C code from imported headers (the static inline operations in
  # Sources/CVector/include) is compiled by the importer, which ASan leaves alone without it.
  # shellcheck disable=SC2046,SC2086  # `sources` holds globs and `flags` words on purpose
  swiftc -O -sanitize=fuzzer,address -Xcc -fsanitize=address -parse-as-library -module-name "fuzz_${target//-/_}" -I "$modules" -L "$modules" \
    $flags "$dir/main.swift" $(eval echo $(cat "$dir/sources")) -lCVector -o "$binary" 2>&1 | grep -v "Cannot export local symbol" || true
  [ -x "$binary" ] || { echo "fuzz: $target did not build" >&2; return 1; }
  local work
  work="$(mktemp -d)"
  cp "$dir"/corpus/* "$work"/
  mkdir -p "$dir/findings"
  echo "fuzz: $target for ${seconds}s"
  local log="$work.log"
  local status=0
  # Swift's own crash reporter is off: under ASan it crashes itself and hides the finding.
  local dict=()
  [ -f "$dir/dict" ] && dict=(-dict="$dir/dict")
  SWIFT_BACKTRACE=enable=no "$binary" "$work" "${dict[@]}" -max_total_time="$seconds" -timeout=1 -rss_limit_mb=1024 -malloc_limit_mb=256 \
    -artifact_prefix="$dir/findings/" -print_final_stats=1 >"$log" 2>&1 || status=$?
  grep -E "^#[0-9]+ +DONE|^stat::(number_of_executed_units|peak_rss_mb)|ERROR|SUMMARY|Fatal error|Test unit written" "$log" || true
  rm -rf "$work" "$log"
  if [ "$status" -ne 0 ]; then echo "fuzz: $target FAILED (exit $status); see $dir/findings/" >&2; return 1; fi
  rmdir "$dir/findings" 2>/dev/null || true
}

# FUZZ_JOBS targets at a time (default: one per CPU): each is one process, so the
# machine's cores run several at once and the whole run takes a fraction of the time.
jobs="${FUZZ_JOBS:-$(nproc)}"
failed=0
running=()
for target in "${targets[@]}"; do
  one "$target" > ".build/fuzz/$target.log" 2>&1 &
  running+=("$!:$target")
  if [ "${#running[@]}" -ge "$jobs" ]; then
    entry="${running[0]}"
    running=("${running[@]:1}")
    wait "${entry%%:*}" || failed=1
    cat ".build/fuzz/${entry#*:}.log"
  fi
done
for entry in "${running[@]}"; do
  wait "${entry%%:*}" || failed=1
  cat ".build/fuzz/${entry#*:}.log"
done
[ "$failed" -eq 0 ] || { echo "fuzz: a target failed (above)" >&2; exit 1; }
echo "fuzz: all targets passed"
