#!/usr/bin/env bash
# Install the host CLIs of the real-client tier (tests/hosts/) from the npm registry, at the exact versions
# pinned in scripts/host-clis.txt, into a cache folder — never globally:
#   ${VERIGATE_HOST_CLIS:-<repo>/.cache/host-clis}/node_modules/.bin/{claude,codex}
# Idempotent: a package already installed at its pinned version is left alone.
# Never fails the build: without npm, or when the registry cannot be reached, it says so and exits 0; the tier
# then skips with the reason written to <cache>/unavailable.txt.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pins="$root/scripts/host-clis.txt"
cache="${VERIGATE_HOST_CLIS:-$root/.cache/host-clis}"
reason_file="$cache/unavailable.txt"

mkdir -p "$cache"
# keep the default cache out of git without touching the repository's .gitignore
if [ "$cache" = "$root/.cache/host-clis" ] && [ ! -f "$root/.cache/.gitignore" ]; then
    printf '*\n' > "$root/.cache/.gitignore"
fi

unavailable() {  # record why the tier cannot run, say it, and succeed
    printf '%s\n' "$1" > "$reason_file"
    echo "install-host-clis: $1 (the real-client tier tests/hosts will skip)" >&2
    exit 0
}

command -v npm >/dev/null 2>&1 || unavailable "npm not found on PATH"
command -v node >/dev/null 2>&1 || unavailable "node not found on PATH"

installed() {  # the version installed in the cache for a package name, empty when absent
    node -e 'try{console.log(require(process.argv[1]).version)}catch(e){}' \
        "$cache/node_modules/$1/package.json" 2>/dev/null || true
}

wanted=()
while read -r spec; do
    case "$spec" in ''|'#'*) continue ;; esac
    name="${spec%@*}"
    version="${spec##*@}"
    [ "$(installed "$name")" = "$version" ] || wanted+=("$spec")
done < "$pins"

if [ "${#wanted[@]}" -gt 0 ]; then
    registry="$(npm config get registry 2>/dev/null || echo https://registry.npmjs.org/)"
    # one cheap probe first, so an offline machine gets a clear reason instead of npm's retry storm
    if ! timeout 45 npm view --loglevel=error --fetch-retries=1 --fetch-timeout=20000 "${wanted[0]}" version \
            >/dev/null 2>&1; then
        unavailable "the npm registry $registry is unreachable (npm view ${wanted[0]} failed)"
    fi
    if ! timeout 600 npm install --prefix "$cache" --no-audit --no-fund --save-exact --loglevel=error "${wanted[@]}"; then
        unavailable "npm install ${wanted[*]} from $registry failed"
    fi
fi
rm -f "$reason_file"
echo "host CLIs in $cache/node_modules/.bin: claude $(installed @anthropic-ai/claude-code), codex $(installed @openai/codex)"
