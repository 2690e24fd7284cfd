#!/usr/bin/env bash
# A contract's cost beside the transcoding it follows: twitter.json (or FILE) against a full
# schema of itself (bench/contracts/learn_schema.py), JSON normalization against the
# contract check after it (the one-pass walk over the normalized output, the tree only when
# the walk cannot vouch) and against the check a JSON route makes (in the normalizer, as it
# writes), medians of ROUNDS rounds and callgrind instructions of each. Loopback-free: one
# process, no network.
#   bench/contracts.sh [FILE]      # ROUNDS=5
set -euo pipefail
cd "$(dirname "$0")/.."
FILE=${1:-../shared/bench-data/twitter.json}
ROUNDS=${ROUNDS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
swift build -c release --product serializerd-bench > /dev/null
bench=.build/release/serializerd-bench
python3 bench/contracts/learn_schema.py "$FILE" > "$work/schema.json"
"$bench" --contract "$work/schema.json" "$FILE" "$ROUNDS"
if command -v valgrind > /dev/null; then
  cp "$bench" "$work/bench" && strip -g "$work/bench"   # valgrind reads no Swift 6.3 debug info
  count() {
    valgrind --tool=callgrind --callgrind-out-file="$work/cg" "$work/bench" --contract-phase "$1" "$work/schema.json" "$FILE" "$2" > /dev/null 2>&1
    awk '/^summary:/ {print $2}' "$work/cg"
  }
  base=$(count normalize 0)
  normalize=$(count normalize 3)
  validate=$(count validate 3)
  checked=$(count checked 3)
  awk -v b="$base" -v n="$normalize" -v v="$validate" -v c="$checked" 'BEGIN {
    printf "instructions per run: transcode %.0f, contract after it %.0f (÷ transcode %.2f), checked in the normalizer %.0f (added ÷ transcode %.3f)\n",
      (n - b) / 3, (v - b) / 3, (v - b) / (n - b), (c - b) / 3, (c - n) / (n - b) }'
fi
