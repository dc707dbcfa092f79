#!/usr/bin/env bash
# Install what the PostgreSQL store tests (tests/store/postgres) start their throwaway server from:
#   - Debian's postgresql (initdb, pg_ctl, postgres under /usr/lib/postgresql/<version>/bin)
# The tests initdb into a temporary folder and listen on 127.0.0.1 only; no system cluster is used. Idempotent.
# Without root or apt this says why and exits 0: the tests then skip locally, and fail under CI (CI=true).
set -euo pipefail

found() {
    command -v initdb >/dev/null && return 0
    local bindir
    bindir=$(pg_config --bindir 2>/dev/null || true)
    [[ -n $bindir && -x $bindir/initdb ]] && return 0
    compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null
}

if ! found; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        # the package's own cluster is not wanted: the tests make their own, so nothing is started here
        { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql \
            || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
                 postgresql; }; } >/dev/null \
            || echo "install-postgres: could not install postgresql; the PostgreSQL store tests will skip (fail under CI)" >&2
    else
        echo "install-postgres: no initdb found (install PostgreSQL's server package with your package manager)" >&2
    fi
fi

if found; then
    echo "postgresql: $(compgen -G '/usr/lib/postgresql/*/bin/initdb' | head -n1 || command -v initdb)"
else
    echo "postgresql: missing"
fi
