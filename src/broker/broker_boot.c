/* The bootstrap checkpoint of `strand format` (broker_boot.h), as Kafka
 * 4.4's kafka-storage format writes it into a controller's
 * __cluster_metadata-0 (read off its files; tests/unit/test_broker_boot
 * compares the bytes):
 *
 *   00000000000000000000-0000000000.checkpoint, a metadata snapshot
 *   (layout at the top of src/cluster/meta_snap.c) with id 0-0:
 *     batch 0, control: SnapshotHeaderRecord (lastContainedLogTimestamp:
 *       the time of the format), then on a dynamic quorum a
 *       KRaftVersionRecord (kraft.version 1) and, with initial voters
 *       (--standalone, --initial-controllers), a VotersRecord
 *       (raft_voters.h) of every voter in the order given, each with its
 *       directory id, its endpoint under the controller listener's name
 *       and kraft.version 0-1;
 *     batch 1, data: FeatureLevelRecord(metadata.version) (Kafka adds the
 *       other features it finalizes; Strand finalizes none of them);
 *     batch 2, control: SnapshotFooterRecord.
 *
 * A static quorum's checkpoint has the header alone in batch 0. A node
 * reads the checkpoint at start-up (broker_boot_read): the level of
 * metadata.version its first active controller commits, and the voters
 * of a dynamic quorum before any VotersRecord is in its log. It is not
 * the node's own snapshot: the metadata log's recovery passes over id
 * 0-0. */
#include "broker/broker_boot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cluster/meta_image.h"
#include "cluster/meta_rec.h"
#include "cluster/meta_snap.h"
#include "net/net_loop.h"
#include "proto/proto_gen.h"

#define BOOT_METADATA_VERSION "metadata.version"
#define BOOT_ELR_VERSION "eligible.leader.replicas.version"
#define BOOT_TOPIC_DIR "__cluster_metadata-0"

/* The voters of boot as a VotersRecord's set, kraft.version 0-1 each. */
static void boot_voters(const broker_boot_t *boot, raft_voters_t *vs)
{
    raft_voter_t v;

    for (int i = 0; i < boot->nvoters; i++) {
        const broker_boot_voter_t *bv = &boot->voters[i];
        memset(&v, 0, sizeof(v));
        v.id = bv->id;
        memcpy(v.dir_id, bv->dir_id, 16);
        v.neps = 1;
        snprintf(v.eps[0].name, sizeof(v.eps[0].name), "%s", bv->listener);
        snprintf(v.eps[0].host, sizeof(v.eps[0].host), "%s", bv->host);
        v.eps[0].port = (uint16_t)bv->port;
        v.kv_min = 0;
        v.kv_max = 1;
        raft_voters_add(vs, &v);
    }
}

/* The control records after the header: their values in vals. */
static int boot_ctl(const broker_boot_t *boot, meta_snap_ctl_t ctl[2], buf_t *vals)
{
    raft_voters_hist_t hist;
    raft_voters_t vs;
    int n;

    raft_voters_init(&vs);
    raft_voters_hist_init(&hist);
    boot_voters(boot, &vs);
    if (boot->kraft_version > 0)
        raft_voters_hist_put(&hist, -1, boot->kraft_version, boot->nvoters ? &vs : NULL);
    n = raft_voters_hist_ctl(&hist, 0, ctl, vals);
    raft_voters_hist_free(&hist);
    raft_voters_free(&vs);
    return n;
}

void broker_boot_build(const broker_boot_t *boot, int64_t last_ts, int64_t now_ms, buf_t *out)
{
    meta_snap_id_t id = {0, 0};
    meta_snap_ctl_t ctl[2];
    meta_image_t img;
    meta_rec_t rec;
    buf_t vals;
    char err[256];
    int nctl;

    buf_init(&vals);
    meta_image_init(&img);
    nctl = boot_ctl(boot, ctl, &vals);
    meta_rec_init(&rec, META_REC_FEATURE_LEVEL);
    rec.u.feature.name.p = BOOT_METADATA_VERSION;
    rec.u.feature.name.len = (int32_t)strlen(BOOT_METADATA_VERSION);
    rec.u.feature.feature_level = boot->metadata_version;
    (void)meta_image_apply(&img, &rec, err, sizeof(err)); /* a level always applies */
    if (boot->elr_version > 0) {
        rec.u.feature.name.p = BOOT_ELR_VERSION;
        rec.u.feature.name.len = (int32_t)strlen(BOOT_ELR_VERSION);
        rec.u.feature.feature_level = boot->elr_version;
        (void)meta_image_apply(&img, &rec, err, sizeof(err));
    }
    meta_snap_build(out, id, &img, last_ts, ctl, nctl, now_ms);
    meta_image_free(&img);
    buf_free(&vals);
}

int broker_boot_write(const char *meta_dir, const broker_boot_t *boot, char *err, size_t errlen)
{
    meta_snap_id_t id = {0, 0};
    int64_t now = net_now_wall_ms();
    char dir[4096], path[4200];
    buf_t b;
    int rc;

    snprintf(dir, sizeof(dir), "%s/%s", meta_dir, BOOT_TOPIC_DIR);
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: cannot create: %s", dir, strerror(errno));
        return -1;
    }
    buf_init(&b);
    broker_boot_build(boot, now, now, &b);
    rc = meta_snap_write(dir, id, b.p, b.len);
    /* read-only, as Kafka leaves every snapshot it has written */
    snprintf(path, sizeof(path), "%s/%s", dir, BROKER_BOOT_FILE);
    if (rc == 0)
        rc = chmod(path, 0400);
    if (rc < 0)
        snprintf(err, errlen, "%s/%s: cannot write: %s", dir, BROKER_BOOT_FILE, strerror(errno));
    buf_free(&b);
    return rc;
}

/* ---- reading ---- */

static void boot_on_ctl(void *arg, int16_t type, const uint8_t *value, size_t len)
{
    broker_boot_state_t *st = arg;
    int kv;

    if (type == PROTO_REC_K_RAFT_VERSION_RECORD && (kv = raft_kraft_version_decode(value, len)) >= 0)
        st->kraft_version = (int16_t)kv;
    if (type == PROTO_REC_VOTERS_RECORD && !st->has_voters &&
        raft_voters_decode(&st->voters, value, len) == 0)
        st->has_voters = 1;
}

int broker_boot_read(const char *meta_dir, broker_boot_state_t *st, char *err, size_t errlen)
{
    meta_snap_id_t id = {0, 0};
    meta_snap_info_t info;
    meta_image_t img;
    char dir[4096], path[4200];
    struct stat sb;
    int rc;

    memset(st, 0, sizeof(*st));
    raft_voters_init(&st->voters);
    snprintf(dir, sizeof(dir), "%s/%s", meta_dir, BOOT_TOPIC_DIR);
    snprintf(path, sizeof(path), "%s/%s", dir, BROKER_BOOT_FILE);
    if (stat(path, &sb) < 0)
        return 0;
    memset(&info, 0, sizeof(info));
    info.on_ctl = boot_on_ctl;
    info.arg = st;
    meta_image_init(&img);
    rc = meta_snap_load(dir, id, &img, &info, err, errlen);
    if (rc == 0) {
        int mv = meta_image_feature(&img, BOOT_METADATA_VERSION);
        st->present = 1;
        st->metadata_version = (int16_t)(mv > 0 ? mv : 0);
        st->elr_version = (int16_t)meta_image_feature(&img, BOOT_ELR_VERSION);
    } else {
        broker_boot_state_free(st);
    }
    meta_image_free(&img);
    return rc;
}

void broker_boot_state_free(broker_boot_state_t *st)
{
    raft_voters_free(&st->voters);
    st->has_voters = 0;
}
