#!/usr/bin/env bash
# The benchmarks, side by side: each one measures verigate and its peer or baseline in the same run and prints
# ratios (nothing is asserted; absolute times depend on the machine and its load).
# Usage: scripts/bench.sh [NAME ...]     NAME: finalize judge redact grade evidence store stop_hook selfgate_hook
#        (default: all, with sizes small enough for a 2-core machine; run one benchmark directly for its options)
set -euo pipefail
cd "$(dirname "$0")/.."
python=.venv/bin/python
[[ -x $python ]] || { echo "scripts/bench.sh: run scripts/test.sh once first (it sets up .venv)" >&2; exit 2; }

declare -A args=(
  [finalize]=""
  [judge]=""
  [redact]="--mb 3"
  [grade]="--mb 40 --rounds 3"
  [evidence]=""
  [store]=""
  [stop_hook]=""
  [selfgate_hook]="--size-mb 20 --repeat 5"
)
names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=(finalize judge redact grade evidence store stop_hook selfgate_hook)
for name in "${names[@]}"; do
  [[ -v "args[$name]" ]] || { echo "scripts/bench.sh: unknown benchmark $name" >&2; exit 2; }
  echo "== benchmarks/bench_$name.py ${args[$name]}"
  # shellcheck disable=SC2086  # the arguments are words on purpose
  "$python" "benchmarks/bench_$name.py" ${args[$name]}
done
