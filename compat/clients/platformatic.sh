#!/usr/bin/env bash
# compat/clients/platformatic.sh: @platformatic/kafka (Node.js, pinned in
# compat/platformatic/package.json and package-lock.json; 1.35.0 is its
# newest release for Node.js 20, the one on the machines here) through
# compat/platformatic/suite.mjs. See compat/lib/client.sh for the calls.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/client.sh"

case ${1:-} in
    na) ;;
    install)
        NM=$(npm_modules "$ROOT/compat/platformatic") || exit $?
        echo "VERSION: @platformatic/kafka $(node -p "require('$NM/@platformatic/kafka/package.json').version") (node $(node --version))"
        ;;
    run)
        shift
        NM=$(npm_modules "$ROOT/compat/platformatic") || exit $?
        # An ES module finds its packages next to it: run a link to suite.mjs
        # placed beside the installed node_modules.
        ln -sf "$ROOT/compat/platformatic/suite.mjs" "${NM%/node_modules}/suite.mjs"
        exec node --preserve-symlinks-main "${NM%/node_modules}/suite.mjs" "$COMPAT_BS" "$COMPAT_ID" "$@"
        ;;
    *) fail "usage: $0 na | install | run SCENARIO [PHASE]" ;;
esac
