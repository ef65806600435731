#!/usr/bin/env bash
# compat/dynbrokers-mixed-java.sh: compat/dynbrokers-java.sh with MIXED=1:
# Strand's broker-only nodes 4 and 5 on a dynamic quorum of three Apache
# Kafka 4.4 controllers. It needs Kafka: it runs only with KAFKA_REF=1 (as
# 0714-cluster-mixed), and then its brokers are strand all the same.
# skip (compat/lib/client.sh).
# shellcheck source=lib/client.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/client.sh"
case ${KAFKA_REF:-0} in 0 | "") skip "runs with KAFKA_REF=1 only (it mixes Strand and Kafka 4.4 nodes)" ;; esac
KAFKA_REF= MIXED=1 exec bash "$(dirname "${BASH_SOURCE[0]}")/dynbrokers-java.sh" "$@"
