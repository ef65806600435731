/* Replays a crash file written by the socket fuzzer: the same frames, in
 * the same order, on as many connections as they were sent on. Deleting
 * "req" entries (a header line and its hex line) from the file and
 * replaying against a fresh broker is how a finding is minimised. */
#include "fuzz/fuzz_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/mem.h"

#define FUZZ_REPLAY_NCONN 8

static int fuzz_unhex(const char *s, fuzz_bytes_t *out)
{
    size_t n = strcspn(s, "\r\n");
    if (n % 2)
        return -1;
    fuzz_bytes_set(out, NULL, 0);
    for (size_t i = 0; i < n; i += 2) {
        unsigned v;
        if (sscanf(s + i, "%2x", &v) != 1)
            return -1;
        uint8_t c = (uint8_t)v;
        if (out->len + 1 >= out->cap) {
            out->cap = out->cap * 2 + 64;
            out->p = xrealloc(out->p, out->cap);
        }
        out->p[out->len++] = c;
    }
    return 0;
}

/* Sends one frame on its connection and waits for an answer or a close. */
static void fuzz_replay_one(const char *bootstrap, int *fds, int slot, int expect,
                            const fuzz_bytes_t *frame, fuzz_bytes_t *ans, int verbose)
{
    if (fds[slot] < 0)
        fds[slot] = fuzz_net_connect(bootstrap, 5000);
    if (fds[slot] < 0 || fuzz_net_send(fds[slot], frame->p, frame->len) < 0) {
        fprintf(stderr, "strand-fuzz: replay: cannot send on connection %d\n", slot);
        return;
    }
    if (expect == FUZZ_E_NONE)
        return;
    int rc = fuzz_net_recv(fds[slot], ans, expect == FUZZ_E_ANSWER ? 2000 : 500);
    if (verbose)
        fprintf(stderr, "strand-fuzz: replay: conn %d: %s\n", slot,
                rc == FUZZ_RECV_FRAME     ? "answered"
                : rc == FUZZ_RECV_TIMEOUT ? "no answer yet"
                                          : "closed");
    if (rc != FUZZ_RECV_FRAME) {
        close(fds[slot]);
        fds[slot] = -1;
    }
}

/* A fresh connection gets an ApiVersions v0 answer. */
static int fuzz_replay_alive(const char *bootstrap)
{
    proto_req_header_t h = { PROTO_API_API_VERSIONS, 0, 1, PROTO_STR("strand-fuzz") };
    fuzz_bytes_t ans = { 0 };
    buf_t b;
    int fd = -1, ok = 0;
    usleep(200 * 1000);
    for (int i = 0; i < 5 && fd < 0; i++)
        if ((fd = fuzz_net_connect(bootstrap, 5000)) < 0)
            usleep(200 * 1000);
    if (fd < 0)
        return 0;
    buf_init(&b);
    buf_put_i32(&b, 0);
    proto_req_header_encode(&b, &h);
    buf_set_i32(&b, 0, (int32_t)(b.len - 4));
    ok = fuzz_net_send(fd, b.p, b.len) == 0 && fuzz_net_recv(fd, &ans, 10000) == FUZZ_RECV_FRAME;
    buf_free(&b);
    fuzz_bytes_free(&ans);
    close(fd);
    return ok;
}

int fuzz_replay(const char *bootstrap, const char *path, int verbose)
{
    FILE *in = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    int fds[FUZZ_REPLAY_NCONN], slot = -1, expect = FUZZ_E_ANSWER, n = 0;
    fuzz_bytes_t frame = { 0 }, ans = { 0 };
    if (!in) {
        perror(path);
        return 3;
    }
    for (int i = 0; i < FUZZ_REPLAY_NCONN; i++)
        fds[i] = -1;
    while (getline(&line, &cap, in) > 0) {
        uint64_t seed;
        if (sscanf(line, "# strand-fuzz: seed %" SCNu64, &seed) == 1 &&
            fuzz_prepare(bootstrap, seed) < 0) {
            fprintf(stderr, "strand-fuzz: replay: cannot set up the topics of seed %" PRIu64 "\n",
                    seed);
            break;
        }
        if (!strncmp(line, "req ", 4)) {
            if (sscanf(line, "req conn=%d %*s %*s %*s expect=%d", &slot, &expect) != 2 || slot < 0 ||
                slot >= FUZZ_REPLAY_NCONN)
                slot = -1;
        } else if (slot >= 0 && line[0] != '#') {
            if (fuzz_unhex(line, &frame) == 0 && frame.len) {
                fuzz_replay_one(bootstrap, fds, slot, expect, &frame, &ans, verbose);
                n++;
            }
            slot = -1;
        }
    }
    free(line);
    fclose(in);
    for (int i = 0; i < FUZZ_REPLAY_NCONN; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    fuzz_bytes_free(&frame);
    fuzz_bytes_free(&ans);
    int alive = fuzz_replay_alive(bootstrap);
    printf("strand-fuzz: replayed %d requests: the broker %s\n", n,
           alive ? "still answers" : "is gone or does not answer");
    return alive ? 0 : 2;
}
