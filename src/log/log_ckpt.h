/* Small files of the log layer written atomically (tmp, fsync, rename,
 * fsync of the directory) and Kafka's text checkpoint format (protocol/FORMATS.md
 * §7.6): a version line, a count line, then one entry per line with
 * fields separated by a space. */
#ifndef STRAND_LOG_LOG_CKPT_H
#define STRAND_LOG_LOG_CKPT_H

#include <stddef.h>
#include <stdint.h>

/* Replaces path with data: writes "<path>.tmp", fsyncs it, renames it over
 * path and fsyncs the directory. Returns 0; -1 with errno when path was not
 * touched (it keeps its previous contents, or stays missing); -2 with
 * errno when path has the new contents but the directory fsync failed. */
int log_ckpt_write_file(const char *path, const void *data, size_t len);
/* The same without the fsyncs, for a file whose durability a later fsync
 * of the file and its directory gives (the log's flush): a crash before
 * it may leave path as it was, or with the new contents cut short.
 * Returns 0, or -1 with errno when path was not touched. */
int log_ckpt_write_unsynced(const char *path, const void *data, size_t len);

/* Reads a whole file into memory the caller owns (NUL-terminated). NULL
 * with errno (ENOENT if missing). */
char *log_ckpt_read_file(const char *path, size_t *len);

/* fsyncs a directory (after creating, renaming or removing entries). */
int log_ckpt_fsync_dir(const char *dir);

/* Parses a checkpoint of version 0 whose lines have nfields fields (at
 * most 4) and calls fn for each line. Returns the entry count, or -1
 * (errno EBADMSG) if the text is malformed: wrong version, count not
 * matching, missing fields. Fields may be separated by any whitespace. */
int log_ckpt_parse(const char *text, int nfields,
                   int (*fn)(void *opaque, char **fields), void *opaque);

#endif
