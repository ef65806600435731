/* unit_tlog: see unit_tlog.h. */
#include "tests/unit/unit_tlog.h"

#include <CUnit/CUnit.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/unit_log.h"
#include "util/buf.h"

static char tl_root[256];

tl_tb_t tl_tb(int n, int64_t ts0)
{
    tl_tb_t t = {n, ts0, 1, -1, -1, -1, 10, NULL};
    return t;
}

/* Value bytes of record i: vsize letters from 'a' + i on. */
static void tl_tb_value(buf_t *out, int i, const void *arg)
{
    const tl_tb_t *t = arg;
    for (size_t k = 0; k < t->vsize; k++)
        buf_put_i8(out, (int8_t)('a' + (i + (int)k) % 26));
}

uint8_t *tl_mkbatch(const tl_tb_t *t, size_t *len)
{
    unit_batch_t b = {t->n, t->ts, t->ts0, t->dts, t->pid, t->pepoch, t->seq, tl_tb_value, t};
    return unit_batch(&b, len);
}

int tl_root_init(const char *name)
{
    snprintf(tl_root, sizeof(tl_root), "/tmp/strand-%s-XXXXXX", name);
    return mkdtemp(tl_root) ? 0 : -1;
}

void tl_root_remove(void)
{
    unit_rm_rf(tl_root);
}

const char *tl_fresh_dir(void)
{
    static int n;
    static char dir[300];
    snprintf(dir, sizeof(dir), "%s/t-%d", tl_root, n++);
    return dir;
}

log_open_args_t tl_args_clean(int clean)
{
    log_open_args_t a = {"t", 0, 0, -1, -1, clean, TL_NOW};
    return a;
}

log_config_t tl_small_cfg(void)
{
    log_config_t c;
    log_config_defaults(&c);
    c.segment_index_bytes = 4096;
    return c;
}

log_t *tl_open_log(const char *dir, const log_config_t *cfg, int clean)
{
    log_open_args_t a = tl_args_clean(clean);
    return log_open(dir, cfg, &a);
}

int64_t tl_append(log_t *log, const tl_tb_t *t, int32_t epoch)
{
    size_t len;
    uint8_t *b = tl_mkbatch(t, &len);
    log_append_result_t res;
    int16_t err = log_append(log, b, len, epoch, TL_NOW, &res);
    free(b);
    CU_ASSERT_EQUAL(err, 0);
    return err ? -1 : res.base_offset;
}

char *tl_path_in(const char *dir, const char *name)
{
    static char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return p;
}

uint8_t *tl_read_all(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    uint8_t *p;
    if (fd < 0)
        return NULL;
    fstat(fd, &st);
    p = malloc((size_t)st.st_size + 1);
    *len = (size_t)pread(fd, p, (size_t)st.st_size, 0);
    close(fd);
    return p;
}

int64_t tl_file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) < 0 ? -1 : st.st_size;
}

uint8_t *tl_read_region(const log_read_result_t *r)
{
    uint8_t *p = malloc((size_t)r->len + 1);
    ssize_t n = pread(r->fd, p, (size_t)r->len, r->file_pos);
    CU_ASSERT_EQUAL((ssize_t)r->len, n);
    return p;
}

int64_t tl_be64(const uint8_t *p)
{
    int64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

int32_t tl_be32(const uint8_t *p)
{
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]);
}
