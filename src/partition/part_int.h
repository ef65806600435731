/* Shared by the files of the partition module only. */
#ifndef STRAND_PARTITION_PART_INT_H
#define STRAND_PARTITION_PART_INT_H

#include "partition/part.h"
#include "util/kerr.h"

/* Kafka error codes the module returns. */

/* Writes name with '.' as '_' to out (len bytes). */
void part_norm(const char *name, size_t len, char *out);
/* Allocates a topic without partitions and enters it in the maps. */
topic_t *part_topic_new(part_reg_t *reg, const char *name, size_t len, const uint8_t id[16],
                        const topic_cfg_t *cfg);
/* Removes a topic from the maps (not freeing it). */
void part_topic_unlink(part_reg_t *reg, topic_t *topic);
/* Frees a topic and its part_t's (the logs belong to the manager). */
void part_topic_free(topic_t *topic);
part_t *part_new(topic_t *topic, int32_t index, log_t *log);
/* Grows the parts array to nparts (new slots NULL). */
void part_topic_grow(topic_t *topic, int32_t nparts);
void part_take_leadership(part_t *part);
/* First start with this metadata log: the bootstrap records and, for a
 * data dir that has partition directories, records describing them.
 * Returns 0 or a Kafka error code. */
int16_t part_meta_bootstrap(part_reg_t *reg, int64_t now_ms);

#endif
