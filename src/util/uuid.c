#include "util/uuid.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

static const char uuid_b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static int uuid_random_bytes(uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t r = getrandom(p, n, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

int uuid_is_zero(const uint8_t id[16])
{
    for (int i = 0; i < 16; i++)
        if (id[i])
            return 0;
    return 1;
}

/* Kafka reserves 0 (no id) and 1 (the metadata topic's id). */
static int uuid_is_reserved(const uint8_t id[16])
{
    for (int i = 0; i < 15; i++)
        if (id[i])
            return 0;
    return id[15] <= 1;
}

int uuid_generate(uint8_t out[16])
{
    char s[UUID_STR_LEN + 1];

    do {
        if (uuid_random_bytes(out, 16) < 0)
            return -1;
        out[6] = (uint8_t)((out[6] & 0x0f) | 0x40); /* version 4 */
        out[8] = (uint8_t)((out[8] & 0x3f) | 0x80); /* IETF variant */
        uuid_to_base64(out, s);
    } while (uuid_is_reserved(out) || s[0] == '-');
    return 0;
}

void uuid_to_base64(const uint8_t id[16], char out[UUID_STR_LEN + 1])
{
    int o = 0, i;

    for (i = 0; i + 3 <= 16; i += 3) {
        uint32_t v = ((uint32_t)id[i] << 16) | ((uint32_t)id[i + 1] << 8) | id[i + 2];
        out[o++] = uuid_b64[(v >> 18) & 63];
        out[o++] = uuid_b64[(v >> 12) & 63];
        out[o++] = uuid_b64[(v >> 6) & 63];
        out[o++] = uuid_b64[v & 63];
    }
    /* one byte left: two characters, no padding */
    out[o++] = uuid_b64[id[15] >> 2];
    out[o++] = uuid_b64[(id[15] & 3) << 4];
    out[o] = '\0';
}

static int uuid_b64_value(char c)
{
    const char *p = c ? strchr(uuid_b64, c) : NULL;
    return p ? (int)(p - uuid_b64) : -1;
}

int uuid_from_base64(const char *s, uint8_t out[16])
{
    int v[UUID_STR_LEN], i, o = 0;

    if (strlen(s) != UUID_STR_LEN)
        return -1;
    for (i = 0; i < UUID_STR_LEN; i++)
        if ((v[i] = uuid_b64_value(s[i])) < 0)
            return -1;
    for (i = 0; i + 4 <= 20; i += 4) {
        uint32_t w = ((uint32_t)v[i] << 18) | ((uint32_t)v[i + 1] << 12) |
                     ((uint32_t)v[i + 2] << 6) | (uint32_t)v[i + 3];
        out[o++] = (uint8_t)(w >> 16);
        out[o++] = (uint8_t)(w >> 8);
        out[o++] = (uint8_t)w;
    }
    out[15] = (uint8_t)((v[20] << 2) | (v[21] >> 4));
    return 0;
}
