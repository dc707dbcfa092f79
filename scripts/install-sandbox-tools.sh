#!/usr/bin/env bash
# Install what the real sandbox tests (tests/selfgate/test_sandbox_wall.py) run the attacks under:
#   - Debian bubblewrap, socat and ripgrep (Claude Code's sandbox needs them on Linux; Codex's uses bwrap)
# (the npm tools — srt, Claude Code's sandbox runtime, and codex — come from scripts/install-host-clis.sh, pinned
# in scripts/host-clis.txt). Idempotent. Tests skip with the reason when a tool is absent.
set -euo pipefail

missing=()
command -v bwrap >/dev/null || missing+=(bubblewrap)
command -v socat >/dev/null || missing+=(socat)
# srt scans the writable roots for files it always protects with ripgrep
command -v rg >/dev/null || missing+=(ripgrep)
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        # never fails the build: without the packages the wall tests skip and say why
        { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
            || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
                 "${missing[@]}"; }; } >/dev/null \
            || echo "install-sandbox-tools: could not install ${missing[*]}; the sandbox wall tests will skip" >&2
    else
        echo "install-sandbox-tools: missing ${missing[*]} (install them with your package manager)" >&2
    fi
fi

echo "sandbox packages: bwrap $(command -v bwrap || echo missing), socat $(command -v socat || echo missing), rg $(command -v rg || echo missing)"
