#!/usr/bin/env bash
# compat/features-java.sh: feature levels and the metadata quorum through
# Kafka's own tools and Java Admin client (4.4.0, fetched from Maven
# Central by scripts/kafka-ref.sh, whose jars they are) against the broker
# at STRAND_BOOTSTRAP:
#   kafka-features describe (org.apache.kafka.tools.FeatureCommand): the
#   seven features Kafka 4.4 names, as the Admin client's
#   describeFeatures() sees them too (compat/java/.../Features.java);
#   upgrade --dry-run, a refused upgrade and a refused update through
#   updateFeatures() with Kafka's messages; one change there and back
#   (upgrade / downgrade of metadata.version where the broker has room
#   above its level, as Strand has, else disable / upgrade of
#   group.version, as on Kafka, finalized at its top), seen by
#   describeFeatures(); the broker is left as it was found.
#   kafka-metadata-quorum describe --status / --replication
#   (MetadataQuorumCommand) and describeMetadataQuorum(): a healthy quorum
#   of one, node 1 leading, no lag, no observers.
# On Strand also its own levels (metadata.version 4.0-IV1 to 4.2-IV1,
# eligible.leader.replicas.version 0-1, finalized at 1, the other features
# 0). Exit 0 pass, 1 fail, 77 skip (no Java/Maven to be
# had).
set -u
# tool, java_run, expect; BS, WORK (compat/lib/java-tool.sh).
# shellcheck source=lib/java-tool.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/java-tool.sh"
RESTORE=
# at_exit: the feature level changed below set back, if the test stopped
# before it did.
at_exit() { [ -z "$RESTORE" ] || eval "$RESTORE"; }
java_tool_init features-java

features() { local n=$1; shift; tool "$n" FeatureCommand "$@"; }
quorum() { local n=$1; shift; tool "$n" MetadataQuorumCommand "$@"; }
# admin NAME CALL ARGS...: the Admin client driver (compat/java/.../Features.java)
admin() { local n=$1 call=$2; shift 2; java_run "$n" strand.compat.Features "$call" "$BS" "$@"; }
# field NAME WORD N: field N of the first line of NAME.out starting with WORD
field() { awk -v w="$2" -v n="$3" '$1 == w { print $n; exit }' "$WORK/$1.out"; }
# level NAME FEATURE: its finalized level in the driver's output, 0 if absent
level() { awk -v f="$2" '$1 == "finalized" && $2 == f { l = $4 } END { print l + 0 }' "$WORK/$1.out"; }
# wait_level FEATURE LEVEL: until describeFeatures() shows it (Kafka's broker
# applies a change just after its controller answers; Strand before it does)
wait_level()
{
    local i
    for i in $(seq 1 20); do
        admin poll describe
        [ "$RC" = 0 ] && [ "$(level poll "$1")" = "$2" ] && return 0
        sleep 0.5
    done
    show poll
    fail "$1 not at level $2"
}

FEATURES="metadata.version kraft.version group.version transaction.version eligible.leader.replicas.version share.version streams.version"
W='[[:space:]]+'

# ---- describe: the tool and describeFeatures() ----
features describe describe
admin adesc describe
expect adesc 0 "^epoch [0-9]+$" "^finalized metadata.version ([0-9]+) \1$" "^observers 0$" \
    "^cluster [A-Za-z0-9_-]{22}$"
for f in $FEATURES; do
    expect describe 0 "^Feature: $f${W}SupportedMinVersion: [^ ]+${W}SupportedMaxVersion: [^ ]+${W}FinalizedVersionLevel: [^ ]+${W}Epoch: [0-9]+$"
    expect adesc 0 "^supported $f [0-9]+ [0-9]+$"
    [ "$f" = metadata.version ] && continue
    # The tool prints the same finalized level (0 when not finalized).
    expect describe 0 "^Feature: $f${W}.*FinalizedVersionLevel: $(level adesc "$f")${W}"
done
MV=$(level adesc metadata.version)
MV_MIN=$(awk '$1 == "supported" && $2 == "metadata.version" { print $3 }' "$WORK/adesc.out")
MV_MAX=$(awk '$1 == "supported" && $2 == "metadata.version" { print $4 }' "$WORK/adesc.out")
if [ -z "${KAFKA_REF:-}" ]; then
    # Strand's own levels (README, "Feature levels").
    expect adesc 0 "^supported metadata.version 23 29$"
    expect describe 0 "^Feature: metadata.version${W}SupportedMinVersion: 4.0-IV1${W}SupportedMaxVersion: 4.2-IV1${W}"
    for f in $FEATURES; do
        case $f in
        metadata.version) ;;
        eligible.leader.replicas.version) expect adesc 0 "^supported $f 0 1$" ;;
        *) expect adesc 0 "^supported $f 0 0$" ;;
        esac
    done
    # metadata.version, and eligible leader replicas, on from the start
    expect adesc 0 "^finalized eligible\.leader\.replicas\.version 1 1$"
    [ "$(grep -c '^finalized ' "$WORK/adesc.out")" = 2 ] || { show adesc; fail "finalized"; }
fi
echo "kafka-features describe, describeFeatures(): ok"

# ---- refusals, with Kafka's messages ----
PREFIX="The update failed for all features since the following feature had an error: "
features refuse upgrade --feature group.version=9
expect refuse 1 "^Could not upgrade group.version to 9\. ${PREFIX}Invalid update version 9 for feature group.version\. Local controller 1 (only supports versions 0-[0-9]+|does not support this feature\.)$" \
    "^1 out of 1 operation\(s\) failed\.$"
admin updates update foo.bar:1:upgrade "metadata.version:$((MV_MAX + 1)):upgrade:validate" \
    "metadata.version:$((MV - 1)):upgrade:validate" "metadata.version:$MV:safe:validate"
expect updates 0 "^error InvalidUpdateVersionException: ${PREFIX}Invalid update version 1 for feature foo\.bar\. Local controller 1 does not support this feature\.$" \
    "^error InvalidUpdateVersionException: ${PREFIX}Invalid update version $((MV_MAX + 1)) for feature metadata\.version\. Local controller 1 only supports versions $MV_MIN-$MV_MAX$" \
    "^error InvalidUpdateVersionException: ${PREFIX}Invalid update version $((MV - 1)) for feature metadata\.version\. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade\.$"
[ "$(sed -n 4p "$WORK/updates.out")" = ok ] || { show updates; fail "validate-only update"; }
features dry upgrade --feature metadata.version="$MV" --dry-run
expect dry 0 "^metadata\.version can be upgraded to $MV\.$"
echo "kafka-features upgrade (refused, dry run), updateFeatures() refused: ok"

# ---- one change there and back ----
if [ "$MV" -lt "$MV_MAX" ]; then
    RESTORE="admin restore update metadata.version:$MV:safe"
    features up upgrade --feature metadata.version="$MV_MAX"
    expect up 0 "^metadata\.version was upgraded to $MV_MAX\.$"
    wait_level metadata.version "$MV_MAX"
    features back downgrade --feature metadata.version="$MV"
    expect back 0 "^metadata\.version was downgraded to $MV\.$"
    wait_level metadata.version "$MV"
else
    GV=$(level adesc group.version)
    [ "$GV" -gt 0 ] || fail "no feature to change"
    RESTORE="admin restore update group.version:$GV:upgrade"
    features off disable --feature group.version
    expect off 0 "^group\.version was disabled\.$"
    wait_level group.version 0
    features back upgrade --feature group.version="$GV"
    expect back 0 "^group\.version was upgraded to $GV\.$"
    wait_level group.version "$GV"
fi
RESTORE=
echo "kafka-features upgrade / downgrade, seen by describeFeatures(): ok"

# ---- the metadata quorum (describeMetadataQuorum() in the first describe) ----
EPOCH=$(field adesc quorum 3)
HW=$(field adesc quorum 4)
expect adesc 0 "^quorum 1 [1-9][0-9]* [0-9]+$" "^voter 1 [0-9]+$" "^observers 0$"
[ "$(field adesc voter 3)" -ge "$HW" ] || { show adesc; fail "voter behind the high watermark"; }
[ "$(grep -c '^voter ' "$WORK/adesc.out")" = 1 ] || { show adesc; fail "voters"; }
quorum status describe --status
# A voter's endpoints are its controller listeners (the shared broker of
# make check configures none on Strand: {"id": 1}).
expect status 0 "^ClusterId:${W}$(field adesc cluster 2)$" "^LeaderId:${W}1$" "^LeaderEpoch:${W}$EPOCH$" \
    "^HighWatermark:${W}[0-9]+$" "^MaxFollowerLag:${W}0$" "^MaxFollowerLagTimeMs:${W}0$" \
    '^CurrentVoters:[[:space:]]+\[\{"id": 1(, "endpoints": \[[^]]*\])?\}\]$' "^CurrentObservers:${W}\[\]$"
quorum repl describe --replication
expect repl 0 "^NodeId${W}DirectoryId${W}LogEndOffset${W}Lag${W}LastFetchTimestamp${W}LastCaughtUpTimestamp${W}Status" \
    "^1${W}AAAAAAAAAAAAAAAAAAAAAA${W}[0-9]+${W}0${W}[0-9]{13}${W}[0-9]{13}${W}Leader"
[ "$(grep -c Leader "$WORK/repl.out")" = 1 ] || { show repl; fail "replicas"; }
echo "kafka-metadata-quorum describe --status / --replication, describeMetadataQuorum(): ok"
