# Sourced by the paired benchmarks: two daemons loaded at once on the same core, their CPU
# per request compared round by round (the machine's noise hits both alike).
#
#   paired_rounds PID_A PID_B URL_A URL_B SECONDS ROUNDS NAME_A NAME_B SCRATCH
#
# Each round: wrk -t1 -c16 on core 0 against each URL for SECONDS, at the same time; CPU
# time of each PID from /proc/PID/stat over the round, divided by the requests it served.
paired_rounds() {
  local ap=$1 bp=$2 aurl=$3 burl=$4 seconds=$5 rounds=$6 aname=$7 bname=$8 scratch=$9 r a0 a1 b0 b1 wa
  for r in $(seq "$rounds"); do
    a0=$(awk '{print $14 + $15}' "/proc/$ap/stat"); b0=$(awk '{print $14 + $15}' "/proc/$bp/stat")
    taskset -c 0 wrk -t1 -c16 -d"${seconds}s" "$aurl" > "$scratch/wa" & wa=$!
    taskset -c 0 wrk -t1 -c16 -d"${seconds}s" "$burl" > "$scratch/wb"
    wait $wa
    a1=$(awk '{print $14 + $15}' "/proc/$ap/stat"); b1=$(awk '{print $14 + $15}' "/proc/$bp/stat")
    python3 - "$r" "$a0" "$a1" "$b0" "$b1" "$(getconf CLK_TCK)" \
      "$(awk '/requests in/{print $1}' "$scratch/wa")" "$(awk '/requests in/{print $1}' "$scratch/wb")" "$aname" "$bname" <<'PY'
import sys
r, a0, a1, b0, b1, tick, ra, rb, na, nb = sys.argv[1:]
a = (float(a1) - float(a0)) / float(tick) * 1e6 / int(ra)
b = (float(b1) - float(b0)) / float(tick) * 1e6 / int(rb)
print(f"round {r}: {na} {a:.1f} us/req, {nb} {b:.1f} us/req, {nb}/{na} {b / a:.3f}  ({ra} and {rb} requests)")
PY
  done
}
