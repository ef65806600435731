#!/usr/bin/env bash
# compat/clients/kafkajs.sh: KafkaJS (Node.js, pinned with its codecs in
# compat/node/package.json and package-lock.json) through
# compat/node/compat.js; one run checks the metadata, produce, by-time and
# idempotent scenarios (compat/lib/legacy.sh); group, restart, txn and
# configs run one per call (compat/node/scenarios.js). See
# compat/lib/client.sh.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/client.sh"
. "$ROOT/compat/lib/legacy.sh"

case ${1:-} in
    na) ;;
    install)
        NM=$(npm_modules "$ROOT/compat/node") || exit $?
        echo "VERSION: kafkajs $(node -p "require('$NM/kafkajs/package.json').version")"
        ;;
    run)
        shift
        NM=$(npm_modules "$ROOT/compat/node") || exit $?
        legacy_scenario "$1" ||
            NODE_PATH=$NM exec node "$ROOT/compat/node/scenarios.js" "$COMPAT_BS" "$COMPAT_ID" "$@"
        legacy_run env NODE_PATH="$NM" node "$ROOT/compat/node/compat.js" "$COMPAT_BS"
        ;;
    *) fail "usage: $0 na | install | run SCENARIO [PHASE]" ;;
esac
