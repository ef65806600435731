/* The controllers' registrations, decided by the active controller: a
 * ControllerRegistration (API 70, from src/api/api_broker_reg.c) becomes
 * one RegisterControllerRecord v0 naming the controller's id, incarnation
 * id, listeners and supported features as it sent them, which is what
 * Kafka's ClusterControlManager writes; it is checked only for a
 * metadata.version that knows the record. Every node replays it into its
 * image (meta_image_brokers.c), where DescribeCluster on a controller
 * listener finds the controllers, and snapshots keep it
 * (meta_image_recs.c). */
#include <stdio.h>
#include <string.h>

#include "cluster/ctl_int.h"
#include "util/kerr.h"

/* metadata.version 3.7-IV0, the first with controller registrations. */
#define CTL_MV_CONTROLLER_REGISTRATION 15

int16_t ctl_plan_controller_register(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b)
{
    const proto_rec_register_controller_record_t *r = op->broker_req;

    if (meta_image_feature(&ctl->meta->img, CTL_FEATURE_METADATA_VERSION) <
        CTL_MV_CONTROLLER_REGISTRATION) {
        snprintf(op->msg, sizeof(op->msg), "The current MetadataVersion is too old to support "
                                           "controller registrations.");
        return KERR_UNSUPPORTED_VERSION;
    }
    meta_rec_t *rec = ctl_batch_add(b, META_REC_REGISTER_CONTROLLER);
    rec->version = 0;
    rec->u.register_controller = *r; /* its lists live in the request until the answer */
    return KERR_NONE;
}
