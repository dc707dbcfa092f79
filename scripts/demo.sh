#!/usr/bin/env bash
# The main job on the embedded defaults: a gate with no judge configured fails closed into a pending review
# (SQLite store in .verigate/), `verigate review` shows and resolves it; then the bundled rules and trace
# fixtures run. Works on a fresh machine; needs only python3 and the package registries.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -x .venv/bin/python ]]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e .
export PATH="$PWD/.venv/bin:$PATH"

echo "== 1. an agent proposes to stop; no judge is configured, so the gate fails closed"
review_id=$(verigate demo --print-review-id)
echo
echo "== 2. verigate review list"
verigate review list
echo
echo "== 3. verigate review show $review_id"
verigate review show "$review_id"
echo
echo "== 4. verigate review approve $review_id   (a person releases the held answer)"
verigate review approve "$review_id" --by "$(id -un)" --note "checked by hand in the demo" --yes
echo
echo "== 5. verigate ledger verify"
verigate ledger verify
echo
echo "== 6. verigate rules test   (every shipped rule's examples)"
verigate rules test
echo
echo "== 7. verigate grade --self-test   (bundled clean / corrupt / flaky trajectories; exit 3 is the CI signal)"
verigate grade --self-test || [[ $? == 3 ]]
