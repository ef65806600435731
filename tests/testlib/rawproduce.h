/* rawproduce: one record produced by a raw Produce request (v9, a batch
 * built with log_batch_build), to a broker address the test names: past
 * any proxy, and with the acks and timeout the test wants, where a client
 * library would retry or redirect. A test that calls it links
 * libstrand_batch.a, libstrand_proto.a and libstrand_util.a. */
#ifndef STRAND_TESTLIB_RAWPRODUCE_H
#define STRAND_TESTLIB_RAWPRODUCE_H
#include <stdint.h>

/* value (no key) to topic-p at addr ("host:port") with acks and
 * timeout_ms: the partition's error code. Fails the test when the broker
 * cannot be reached or the answer does not decode. */
int16_t tl_raw_produce(const char *addr, const char *topic, int32_t p, int16_t acks,
                       int32_t timeout_ms, const char *value);
#endif
