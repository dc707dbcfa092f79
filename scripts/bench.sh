#!/usr/bin/env bash
# The benchmarks, side by side: verigate and its peers or baselines measured in the same run, alternating, in one
# table of ratios (benchmarks/bench_peers.py; nothing is asserted: absolute times depend on the machine and its
# load). The peers (Guardrails AI, detect-secrets, jsonschema) go into their own environment, .cache/bench-peers
# (made once; never verigate's .venv, which the tests use), and run there in a worker process.
# Usage: scripts/bench.sh [--quick] [--big] [--no-peers] [NAME ...]
#   --quick     a smoke run: tiny sizes, few rounds          --big   also grade a 200 MB session
#   --no-peers  do not make or use the peers' environment (their rows say "peer not installed")
#   NAME        also run these single benchmarks after the table (each runnable alone, --help for its options):
#               finalize judge redact grade grade_dask evidence store store_workers stop_hook selfgate_hook otel, or "all"
# VERIGATE_PYTHON picks verigate's interpreter (default .venv/bin/python, set up by scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
python=${VERIGATE_PYTHON:-.venv/bin/python}

declare -A args=(
  [finalize]=""
  [judge]=""
  [redact]="--mb 3"
  [grade]="--mb 40 --rounds 3"
  [grade_dask]="--files 1000 --rounds 3"
  [evidence]=""
  [store]=""
  [store_workers]=""
  [stop_hook]=""
  [selfgate_hook]="--size-mb 20 --repeat 5"
  [otel]=""
)
all=(finalize judge redact grade grade_dask evidence store store_workers stop_hook selfgate_hook otel)
quick="" big="" peers=1 names=()
for arg in "$@"; do
  case $arg in
    --quick) quick=--quick ;;
    --big) big=--big ;;
    --no-peers) peers="" ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    all) names+=("${all[@]}") ;;
    -*) echo "scripts/bench.sh: unknown option $arg" >&2; exit 2 ;;
    *) [[ -v "args[$arg]" ]] || { echo "scripts/bench.sh: unknown benchmark $arg" >&2; exit 2; }
       names+=("$arg") ;;
  esac
done

[[ -x $python ]] || { echo "scripts/bench.sh: run scripts/test.sh once first (it sets up .venv)" >&2; exit 2; }

peer_args=()
if [[ -n $peers ]]; then
  venv=.cache/bench-peers
  wanted="guardrails-ai detect-secrets jsonschema"
  # made from the system's python3 without its site-packages, so nothing of verigate's environment leaks in
  if [[ ! -f $venv/.installed || $(cat "$venv/.installed") != "$wanted" ]]; then
    echo "scripts/bench.sh: installing the peers into $venv ($wanted)" >&2
    if python3 -m venv --clear "$venv" && "$venv/bin/python" -m pip install -q --upgrade pip \
        && "$venv/bin/python" -m pip install -q $wanted; then
      echo "$wanted" >"$venv/.installed"
      echo "*" >"$venv/.gitignore"   # the environment ignores itself, as newer venvs do
    else
      echo "scripts/bench.sh: could not install the peers; their rows will say \"peer not installed\"" >&2
    fi
  fi
  [[ -f $venv/.installed ]] && peer_args=(--peer-python "$venv/bin/python")
fi

echo "== benchmarks/bench_peers.py $quick $big ${peer_args[*]}"
# shellcheck disable=SC2086  # the empty options vanish on purpose
"$python" benchmarks/bench_peers.py $quick $big "${peer_args[@]}"

for name in "${names[@]}"; do
  options=${args[$name]}
  [[ -n $quick ]] && options=--quick
  echo "== benchmarks/bench_$name.py $options"
  # shellcheck disable=SC2086  # the arguments are words on purpose
  "$python" "benchmarks/bench_$name.py" $options
done
