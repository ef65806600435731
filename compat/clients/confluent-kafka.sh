#!/usr/bin/env bash
# compat/clients/confluent-kafka.sh: confluent-kafka for Python (pinned in
# compat/confluent/requirements.txt; its wheel bundles librdkafka) through
# compat/confluent/suite.py. See compat/lib/client.sh for the calls.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/client.sh"

case ${1:-} in
    na) ;;
    install)
        SITE=$(pip_site "$ROOT/compat/confluent/requirements.txt") || exit $?
        echo "VERSION: confluent-kafka $(PYTHONPATH=$SITE python3 -s -c \
            'import confluent_kafka as c; print(c.__version__, "(librdkafka %s)" % c.libversion()[0])')"
        ;;
    run)
        shift
        SITE=$(pip_site "$ROOT/compat/confluent/requirements.txt") || exit $?
        PYTHONPATH=$SITE exec python3 -s "$ROOT/compat/confluent/suite.py" "$COMPAT_BS" "$COMPAT_ID" "$@"
        ;;
    *) fail "usage: $0 na | install | run SCENARIO [PHASE]" ;;
esac
