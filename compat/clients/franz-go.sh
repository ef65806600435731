#!/usr/bin/env bash
# compat/clients/franz-go.sh: franz-go (Go, pinned in compat/go/go.mod)
# through compat/go/main.go, built into .cache/go/bin; one run checks the
# metadata, produce, by-time and idempotent scenarios (compat/lib/legacy.sh);
# group, restart, txn and configs run one per call (compat/go/scenarios.go).
# See compat/lib/client.sh for the calls.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/client.sh"
. "$ROOT/compat/lib/legacy.sh"

case ${1:-} in
    na) ;;
    install)
        go_bin "$ROOT/compat/go" franz-compat > /dev/null || exit $?
        echo "VERSION: franz-go $(awk '$1 == "github.com/twmb/franz-go" { print $2 }' "$ROOT/compat/go/go.mod")"
        ;;
    run)
        shift
        BIN=$(go_bin "$ROOT/compat/go" franz-compat) || exit $?
        legacy_scenario "$1" || exec "$BIN" "$COMPAT_BS" "$COMPAT_ID" "$@"
        legacy_run "$BIN" "$COMPAT_BS"
        ;;
    *) fail "usage: $0 na | install | run SCENARIO [PHASE]" ;;
esac
