/* rawproduce: see rawproduce.h. */
#include "testlib/rawproduce.h"

#include <string.h>
#include <unistd.h>

#include "log/log_batch.h"
#include "testlib/testlib.h"
#include "testlib/wire.h"

int16_t tl_raw_produce(const char *addr, const char *topic, int32_t p, int16_t acks,
                       int32_t timeout_ms, const char *value)
{
    arena_t arena;
    buf_t batch;
    log_record_t rec;
    log_batch_build_t opt;
    proto_produce_req_t r;
    proto_produce_resp_t resp;
    proto_produce_req_topic_produce_data_t t;
    proto_produce_req_partition_produce_data_t pd;
    memset(&rec, 0, sizeof(rec));
    rec.key_len = -1;
    rec.value = (const uint8_t *)value;
    rec.value_len = (int32_t)strlen(value);
    buf_init(&batch);
    log_batch_build_init(&opt);
    TL_ASSERT(log_batch_build(&batch, &opt, &rec, 1) == 0, "log_batch_build");
    proto_produce_req_init(&r);
    proto_produce_req_topic_produce_data_init(&t);
    proto_produce_req_partition_produce_data_init(&pd);
    pd.index = p;
    pd.records.p = batch.p;
    pd.records.len = (int32_t)batch.len;
    r.acks = acks;
    r.timeout_ms = timeout_ms;
    t.name = tl_wire_str(topic);
    t.partition_data.n = 1;
    t.partition_data.v = &pd;
    r.topic_data.n = 1;
    r.topic_data.v = &t;
    int fd = tl_connect(addr, 2000);
    TL_ASSERT(fd >= 0, "connect %s", addr);
    arena_init(&arena, 4096);
    TL_WIRE_CALL(fd, &arena, produce, 0, 9, &r, &resp);
    close(fd);
    TL_ASSERT(resp.responses.n == 1 && resp.responses.v[0].partition_responses.n == 1,
              "Produce: %d topics", resp.responses.n);
    int16_t err = resp.responses.v[0].partition_responses.v[0].error_code;
    arena_destroy(&arena);
    buf_free(&batch);
    return err;
}
