/* The metadata image as records: what a Kafka controller's snapshot holds
 * for each part of its image, in Kafka's order (MetadataImage's: features,
 * the cluster's brokers and controllers, topics with their partitions,
 * configs, producer ids). Replaying the records into an empty image gives
 * an equal image; the snapshot writer (meta_snap.h) streams them into its
 * batches.
 *
 * One function per part, so that a part added to the image (broker
 * registrations) adds its own function and one line in
 * meta_image_records(). */
#ifndef STRAND_CLUSTER_META_IMAGE_RECS_H
#define STRAND_CLUSTER_META_IMAGE_RECS_H

#include "cluster/meta_image.h"
#include "cluster/meta_rec.h"

/* Receives one record; rec and what it points to (names, arrays) are
 * valid only during the call (they point into the image or the stack). */
typedef void meta_image_rec_fn(void *arg, const meta_rec_t *rec);

/* Every record of the image, in Kafka's order of parts. */
void meta_image_records(const meta_image_t *img, meta_image_rec_fn *fn, void *arg);

/* FeatureLevelRecords v0: metadata.version first (a reader needs it
 * before any other record), then the others by name, as Kafka's
 * bootstrap snapshot orders them. */
void meta_image_features_records(const meta_image_t *img, meta_image_rec_fn *fn, void *arg);
/* The cluster's registrations, as Kafka's ClusterImage writes them: a
 * RegisterBrokerRecord v3 per broker (sorted by id; fenced and in
 * controlled shutdown as they stand), then a RegisterControllerRecord v0
 * per controller. */
void meta_image_cluster_records(const meta_image_t *img, meta_image_rec_fn *fn, void *arg);
/* Per topic: TopicRecord v0, then a PartitionRecord v2 per partition. */
void meta_image_topics_records(const meta_image_t *img, meta_image_rec_fn *fn, void *arg);
/* A ConfigRecord v0 per key of each resource (topics and brokers). */
void meta_image_configs_records(const meta_image_t *img, meta_image_rec_fn *fn, void *arg);
/* The ProducerIdsRecord v0 of the next block (broker id and epoch -1, as
 * in Kafka's snapshots), when a block was ever taken. */
void meta_image_pids_records(const meta_image_t *img, meta_image_rec_fn *fn, void *arg);

#endif
