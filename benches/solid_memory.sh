#!/usr/bin/env bash
# Peak resident memory of an explicit solid run against the memory estimate `fem` checks it by
# (issue 28 item 15). Not a test: RSS depends on the allocator and the machine; the test
# (tests/solid_memory.rs) counts the bytes the run allocates instead.
#
#   benches/solid_memory.sh [FEM] [N ...]      (default: target/release/fem, 20 40 60)
#
# For each N: a 1 x 1 x 1 box of N^3 hex8 (SVK, clamped at x = 0, gravity, auto_dt 0.5),
# `fem run --max-steps 5` under /usr/bin/time -f "%e %U %M" (wall s, user s, peak RSS kB), and
# the estimate `fem check` refuses the run with when FEM_MEMORY_LIMIT=1. Prints a Markdown
# table row per size.
set -euo pipefail
fem=${1:-target/release/fem}
shift || true
sizes=${*:-20 40 60}
kind=${KIND:-hex8}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
uptime
echo "| cells | nodes | peak RSS (MB) | estimate (MB) | estimate / peak | wall s | user s |"
echo "|---|---|---|---|---|---|---|"
for n in $sizes; do
  input=$dir/box$n.yaml
  cat > "$input" <<YAML
mesh:
  box: { lengths: [1.0, 1.0, 1.0], cells: [$n, $n, $n], kind: $kind }
model:
  solid:
    material: { model: svk, young: 1e7, poisson: 0.3, density: 1000 }
    gravity: [0, 0, -9.81]
    auto_dt: 0.5
fixed:
  - group: xmin
time: { scheme: def_exp, dt: 1.0, t_end: 1.0 }
output: { every: 1000000 }
YAML
  estimate=$( (FEM_MEMORY_LIMIT=1 "$fem" check "$input" 2>&1 || true) | sed -n 's/.*would need about \([0-9.]*\) \([kMG]B\).*/\1 \2/p' | head -1) 
  est_mb=$(echo "$estimate" | awk '{v=$1; if ($2=="kB") v/=1000; if ($2=="GB") v*=1000; print v}')
  /usr/bin/time -f "%e %U %M" -o "$dir/time" "$fem" run "$input" -o "$dir/out$n" --max-steps 5 -q
  read -r wall user rss_kb < "$dir/time"
  nodes=$([ "$kind" = hex8 ] && echo $(( (n + 1) * (n + 1) * (n + 1) )) || echo -)
  peak_mb=$(awk -v k="$rss_kb" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }')
  ratio=$(awk -v e="$est_mb" -v p="$peak_mb" 'BEGIN { printf "%.2f", e / p }')
  echo "| $kind $n³ | $nodes | $peak_mb | $est_mb | $ratio | $wall | $user |"
  rm -rf "$dir/out$n"
done
uptime
