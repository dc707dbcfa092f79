#!/usr/bin/env bash
# The test command: sets up .venv (core, every plug-in under plugins/, dev tools), then lint, types, tests.
# Usage: scripts/test.sh [pytest args]     (works on a fresh machine; needs only python3 and the registries)
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ ! -x .venv/bin/python ]]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
# the distributions were renamed (verigate -> verigate-agents): an old .venv would list every plug-in twice
.venv/bin/python -m pip uninstall -y -q verigate verigate-openai verigate-anthropic verigate-jev verigate-git \
  >/dev/null 2>&1 || true
plugin_args=()
for plugin in plugins/*/; do
  [[ -f "$plugin/pyproject.toml" ]] && plugin_args+=(-e "$plugin")
done
.venv/bin/python -m pip install -q -e ".[dev]" "${plugin_args[@]}"

# Headless Chromium renders the HTML report in one test (Debian package; installed when missing and possible).
if ! command -v chromium >/dev/null 2>&1 && [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "scripts/test.sh: could not install chromium; the HTML screenshot test will fail" >&2
fi

# The real-client tier (tests/hosts, docs/host-tier.md) and the sandbox wall (tests/selfgate/test_sandbox_wall.py):
# the npm tools pinned in scripts/host-clis.txt into .cache/host-clis (never globally), and Debian's bubblewrap,
# socat and ripgrep. Without npm, the registry or apt, each script says why and exits 0; those tests then skip.
bash scripts/install-host-clis.sh
bash scripts/install-sandbox-tools.sh
bash scripts/install-postgres.sh   # the PostgreSQL store tests' server (tests/store/postgres)

.venv/bin/ruff check src tests plugins examples benchmarks
.venv/bin/mypy
docs_site=$(mktemp -d)   # the docs site (mkdocs.yml), warnings as errors; site/ stays out of the tree
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$docs_site"
rm -rf "$docs_site"
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
