/* Internal: reading whole files, and writing output files without harm.
 *
 * Output rules (one place for every file Talus writes: recordings, CSV,
 * JSON, sweep tables and summaries, snapshots):
 *  - a path that does not exist, or names a regular file, is written to a
 *    temporary file in the same folder and renamed over it (atomic: a reader
 *    never sees half a file, a failed write leaves the old file);
 *  - a character device or FIFO (/dev/null, /dev/stdout, a named pipe,
 *    bash's >(...)) is written through, opened for writing and never
 *    replaced or truncated;
 *  - a symbolic link is followed: the file it points to obeys the two rules
 *    above (a regular target is replaced by rename, the link stays a link);
 *    a link to nothing is refused;
 *  - a folder, block device or socket is refused. */
#ifndef TALUS_BASE_FILE_H
#define TALUS_BASE_FILE_H

#include <stdio.h>
#include <stddef.h>

#include "talus/types.h"

/* Read the regular file at path into a malloc'ed buffer *out (NUL-terminated,
 * *len bytes before the NUL). Refused before reading anything: a path that
 * is not a regular file (device, FIFO, folder: TL_ERR_IO, "is not a regular
 * file"), a file over max_bytes (its size is known from fstat). At most
 * max_bytes are ever read, even if the file grows meanwhile. TL_ERR_IO or
 * TL_ERR_MEMORY, with the path in err. */
tl_status tl_read_file(const char *path, size_t max_bytes, char **out, size_t *len, tl_error *err);

/* Called by tl_read_file on this thread after each successful read, with
 * the path and the bytes read (NULL fn: none). For hashing every file a
 * computation reads (sweep specs); thread-local, so other threads' reads are
 * not seen. */
typedef void (*tl_read_hook_fn)(void *ctx, const char *path, const void *data, size_t len);
void tl_read_hook_set(tl_read_hook_fn fn, void *ctx);

/* The first cap - 1 bytes (or fewer) of the regular file at path into buf,
 * NUL-terminated: the byte count, or -1 if it cannot be opened or is not a
 * regular file (a FIFO is never waited on, a device never read). For
 * sniffing a file's kind before loading it. */
long tl_read_head(const char *path, char *buf, size_t cap);

/* An output file being written (tl_out_open .. tl_out_commit). */
typedef struct tl_out {
  FILE *f;            /* write here */
  int through;        /* 1: writing through a device or FIFO, no rename */
  char target[4096];  /* the file that receives the data (a symlink resolved) */
  char tmp[4128];     /* the temporary file renamed over target ("" when through) */
  char what[80];      /* "the CSV file": for messages */
} tl_out;

/* 1 if path (after following symlinks) exists and is a character device or
 * FIFO, i.e. it would be written through rather than replaced; else 0. */
int tl_out_is_stream(const char *path);

/* Check, before a long run, that path can be written by the rules above
 * (folder exists and takes a new file; a device/FIFO is writable). `what`
 * names the output in messages ("--csv"). TL_ERR_IO with err->file = path. */
tl_status tl_out_check(const char *path, const char *what, tl_error *err);

/* Open path for writing by the rules above; o->f receives the data. On error
 * nothing is left behind. TL_ERR_ARGUMENT (empty path) or TL_ERR_IO. */
tl_status tl_out_open(tl_out *o, const char *path, const char *what, tl_error *err);

/* Finish: ok != 0 commits (fsync + rename for a regular file), ok == 0 (an
 * earlier write failed) discards the temporary file. A stream error seen on
 * o->f counts as failure. TL_ERR_IO naming the path. */
tl_status tl_out_commit(tl_out *o, int ok, tl_error *err);

/* tl_out_open + one fwrite of n bytes + tl_out_commit. */
tl_status tl_write_file(const char *path, const void *data, size_t n, const char *what, tl_error *err);

#endif
