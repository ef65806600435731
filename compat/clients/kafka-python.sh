#!/usr/bin/env bash
# compat/clients/kafka-python.sh: kafka-python (pinned with its codec
# libraries in compat/python/requirements.txt) through
# compat/python/compat.py; one run checks the metadata, produce, by-time and
# idempotent scenarios (compat/lib/legacy.sh); group, restart, txn and
# configs run one per call (compat/python/scenarios.py). See
# compat/lib/client.sh.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/client.sh"
. "$ROOT/compat/lib/legacy.sh"

case ${1:-} in
    na) ;;
    install)
        SITE=$(pip_site "$ROOT/compat/python/requirements.txt") || exit $?
        echo "VERSION: kafka-python $(PYTHONPATH=$SITE python3 -s -c 'import kafka; print(kafka.__version__)')"
        ;;
    run)
        shift
        SITE=$(pip_site "$ROOT/compat/python/requirements.txt") || exit $?
        legacy_scenario "$1" ||
            PYTHONPATH=$SITE exec python3 -s "$ROOT/compat/python/scenarios.py" "$COMPAT_BS" "$COMPAT_ID" "$@"
        legacy_run env PYTHONPATH="$SITE" python3 -s "$ROOT/compat/python/compat.py" "$COMPAT_BS"
        ;;
    *) fail "usage: $0 na | install | run SCENARIO [PHASE]" ;;
esac
