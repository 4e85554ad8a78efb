#!/usr/bin/env bash
# A VTKHDF writer killed (SIGKILL) at several moments while it writes large steps: after each
# kill VTK's vtkHDFReader must read the file up to its last published step, every step equal
# to what the writer wrote (fem-io's example vtkhdf_sample writes a formula).
# Usage: kill_vtkhdf.sh SAMPLE_BINARY OUT_DIR
set -euo pipefail
sample="$1"
out="$2"
rm -rf "$out"
for case in static moving deflate deflate_moving; do
  for delay in 0.4 0.9 1.3 2.1 2.9; do
    dir="$out/vtkhdf_sample_${case}_$delay"
    # A 40^3 hex8 block (68921 points), 400 frames, no pause: the kill lands mid-step.
    "$sample" "$dir" 400 0 40 "$case" > /dev/null &
    pid=$!
    sleep "$delay"
    kill -9 "$pid" 2> /dev/null || true
    wait "$pid" 2> /dev/null || true
    # The report goes to a file first: `| head -n 1` would close the pipe on an unbuffered
    # Python (PYTHONUNBUFFERED) and fail the step under pipefail with a BrokenPipeError.
    python3 "$(dirname "$0")/check_vtkhdf.py" --min-steps 1 "$dir/$case/$case.vtkhdf" > "$dir/check.log"
    head -n 1 "$dir/check.log"
  done
done
