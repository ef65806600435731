#!/usr/bin/env bash
# compat/clients/sarama.sh: IBM sarama (Go, pinned in compat/sarama/go.mod)
# through compat/sarama/main.go, built into .cache/go/bin. See
# compat/lib/client.sh for the calls.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/client.sh"

case ${1:-} in
    na) ;;
    install)
        go_bin "$ROOT/compat/sarama" sarama-compat > /dev/null || exit $?
        echo "VERSION: sarama $(grep -o 'github.com/IBM/sarama v[0-9.]*' "$ROOT/compat/sarama/go.mod" | cut -d ' ' -f 2)"
        ;;
    run)
        shift
        BIN=$(go_bin "$ROOT/compat/sarama" sarama-compat) || exit $?
        exec "$BIN" "$COMPAT_BS" "$COMPAT_ID" "$@"
        ;;
    *) fail "usage: $0 na | install | run SCENARIO [PHASE]" ;;
esac
