#!/usr/bin/env bash
# Install what the real sandbox tests (tests/selfgate/test_sandbox_wall.py) run the attacks under:
#   - Debian bubblewrap, socat and ripgrep (Claude Code's sandbox needs them on Linux; Codex's uses bwrap)
#   - @anthropic-ai/sandbox-runtime (Claude Code's sandbox implementation, CLI `srt`) and @openai/codex
#     into .cache/sandbox-tools/ of this repository — never globally.
# Idempotent: what is already there is left alone. Tests skip with the reason when a tool is absent.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${VERIGATE_SANDBOX_TOOLS:-$root/.cache/sandbox-tools}"
# pinned: the wall tests assert what these versions do with verigate's snippet
srt_version="${SRT_VERSION:-0.0.83}"
codex_version="${CODEX_VERSION:-0.171.0}"

mkdir -p "$cache"
# keep the cache out of git without touching the repository's .gitignore
[ -f "$root/.cache/.gitignore" ] || printf '*\n' > "$root/.cache/.gitignore"

missing=()
command -v bwrap >/dev/null || missing+=(bubblewrap)
command -v socat >/dev/null || missing+=(socat)
# srt scans the writable roots for files it always protects with ripgrep
command -v rg >/dev/null || missing+=(ripgrep)
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" \
            || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"; }
    else
        echo "install-sandbox-tools: missing ${missing[*]} (install them with your package manager)" >&2
    fi
fi

if ! command -v npm >/dev/null; then
    echo "install-sandbox-tools: npm not found; the sandbox runtimes are not installed" >&2
    exit 0
fi
installed() {  # the version npm installed for a package, empty when absent
    node -e 'try{console.log(require(process.argv[1]).version)}catch(e){}' \
        "$cache/node_modules/$1/package.json" 2>/dev/null || true
}
wanted=()
[ "$(installed @anthropic-ai/sandbox-runtime)" = "$srt_version" ] || wanted+=("@anthropic-ai/sandbox-runtime@$srt_version")
[ "$(installed @openai/codex)" = "$codex_version" ] || wanted+=("@openai/codex@$codex_version")
if [ "${#wanted[@]}" -gt 0 ]; then
    npm install --prefix "$cache" --no-audit --no-fund --loglevel=error "${wanted[@]}"
fi
echo "sandbox tools in $cache/node_modules/.bin: $(ls "$cache/node_modules/.bin" 2>/dev/null | tr '\n' ' ')"
