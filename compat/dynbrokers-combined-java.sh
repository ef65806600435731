#!/usr/bin/env bash
# compat/dynbrokers-combined-java.sh: compat/dynbrokers-java.sh with
# COMBINED=1 (three combined nodes of a dynamic quorum), so that make
# check runs both shapes.
COMBINED=1 exec bash "$(dirname "${BASH_SOURCE[0]}")/dynbrokers-java.sh" "$@"
