/* Reading whole files and writing output files without harm (file.h). */
#define _XOPEN_SOURCE 700

#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"

/* "a character device" etc. for st_mode. */
static const char *kind_name(mode_t m) {
  if (S_ISDIR(m)) return "a folder";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a regular file";
}

static _Thread_local tl_read_hook_fn read_hook;
static _Thread_local void *read_hook_ctx;

void tl_read_hook_set(tl_read_hook_fn fn, void *ctx) {
  read_hook = fn;
  read_hook_ctx = ctx;
}

tl_status tl_read_file(const char *path, size_t max_bytes, char **out, size_t *len, tl_error *err) {
  *out = NULL;
  *len = 0;
  if (!path || !path[0]) return tl_error_set(err, TL_ERR_IO, NULL, 0, NULL, "cannot open file: the path is empty");
  /* O_NONBLOCK: opening a FIFO must not wait for a writer before it is refused */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return tl_error_set(err, TL_ERR_IO, path, 0, NULL, "cannot open file: %s", strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    int e = errno;
    close(fd);
    return tl_error_set(err, TL_ERR_IO, path, 0, NULL, "cannot open file: %s", strerror(e));
  }
  if (!S_ISREG(sb.st_mode)) {
    close(fd);
    return tl_error_set(err, TL_ERR_IO, path, 0, NULL, "is %s, not a regular file: expected a file to read",
                        kind_name(sb.st_mode));
  }
  if ((unsigned long long)sb.st_size > (unsigned long long)max_bytes) {
    close(fd);
    return tl_error_set(err, TL_ERR_IO, path, 0, NULL, "file of %lld bytes is larger than the %zu MB this format can hold",
                        (long long)sb.st_size, max_bytes >> 20);
  }
  /* the size is known: one buffer, and never more than max_bytes read (a file growing meanwhile is refused) */
  size_t cap = (size_t)sb.st_size + 1, n = 0;
  char *buf = malloc(cap + 1);
  if (!buf) {
    close(fd);
    return tl_error_set(err, TL_ERR_MEMORY, path, 0, NULL, "out of memory reading the file");
  }
  int saved = 0;
  while (n < cap) {
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) saved = errno;
    if (r <= 0) break;
    n += (size_t)r;
  }
  close(fd);
  if (saved) {
    free(buf);
    return tl_error_set(err, TL_ERR_IO, path, 0, NULL, "cannot read file: %s", strerror(saved));
  }
  if (n > (size_t)sb.st_size) { /* never a silently cut file */
    free(buf);
    return tl_error_set(err, TL_ERR_IO, path, 0, NULL, "the file grew while it was read (%lld bytes when opened)",
                        (long long)sb.st_size);
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  if (read_hook) read_hook(read_hook_ctx, path, buf, n);
  return TL_OK;
}

/* ------------------------------------------------------------ output */

/* An I/O error about `path`: the message names it (no "FILE:" prefix), err->file holds it. */
static tl_status out_error(tl_error *err, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static tl_status out_error(tl_error *err, const char *path, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_error_setv(err, TL_ERR_IO, NULL, 0, NULL, fmt, ap);
  va_end(ap);
  if (err) snprintf(err->file, sizeof err->file, "%s", path);
  return TL_ERR_IO;
}

/* How path is to be written. 0 ok: *stream 1 (device/FIFO: through) or 0
 * (replace target by rename; target = path, or the resolved symlink). */
static tl_status classify(const char *path, const char *what, int *stream, char *target, size_t cap, tl_error *err) {
  if (!path || !path[0]) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "path", "%s: the path is empty", what);
  struct stat ls, st;
  *stream = 0;
  if (lstat(path, &ls) != 0) {
    if (errno != ENOENT) return out_error(err, path, "cannot write %s '%s': %s", what, path, strerror(errno));
    if (snprintf(target, cap, "%s", path) >= (int)cap)
      return out_error(err, path, "cannot write %s '%s': the path is too long", what, path);
    return TL_OK; /* a new file */
  }
  if (stat(path, &st) != 0) /* a symlink to nothing */
    return out_error(err, path, "%s '%s' is a symbolic link to a file that does not exist: refused (write to "
                     "the link's target, or remove the link)", what, path);
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
    *stream = 1;
    snprintf(target, cap, "%s", path);
    return TL_OK;
  }
  if (!S_ISREG(st.st_mode))
    return out_error(err, path, "%s '%s' is %s: expected a file path (a regular file, a character device or a FIFO)",
                     what, path, kind_name(st.st_mode));
  if (S_ISLNK(ls.st_mode)) {
    char *real = realpath(path, NULL);
    if (!real) return out_error(err, path, "cannot write %s '%s': %s", what, path, strerror(errno));
    int over = snprintf(target, cap, "%s", real) >= (int)cap;
    free(real);
    if (over) return out_error(err, path, "cannot write %s '%s': the path is too long", what, path);
    return TL_OK;
  }
  snprintf(target, cap, "%s", path);
  return TL_OK;
}

/* The folder of path into dir. */
static int folder_of(const char *path, char *dir, size_t cap) {
  const char *slash = strrchr(path, '/');
  if (!slash) return snprintf(dir, cap, ".") >= (int)cap ? -1 : 0;
  if (slash == path) return snprintf(dir, cap, "/") >= (int)cap ? -1 : 0;
  if ((size_t)(slash - path) >= cap) return -1;
  snprintf(dir, cap, "%.*s", (int)(slash - path), path);
  return 0;
}

int tl_out_is_stream(const char *path) {
  struct stat st;
  return path && stat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
}

tl_status tl_out_check(const char *path, const char *what, tl_error *err) {
  if (!what) what = "output";
  char target[4096], dir[4096];
  int stream = 0;
  tl_status s = classify(path, what, &stream, target, sizeof target, err);
  if (s) return s;
  if (stream) {
    if (access(target, W_OK) != 0) return out_error(err, path, "cannot write %s '%s': %s", what, path, strerror(errno));
    return TL_OK;
  }
  if (folder_of(target, dir, sizeof dir) != 0) return out_error(err, path, "%s '%s': the path is too long", what, path);
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return out_error(err, path, "cannot write %s '%s': folder '%s' %s", what, path, dir,
                     stat(dir, &st) != 0 ? "does not exist" : "is not a folder");
  char probe[4200];
  snprintf(probe, sizeof probe, "%s/.talus-probe-XXXXXX", dir);
  int fd = mkstemp(probe);
  if (fd < 0)
    return out_error(err, path, "cannot write %s '%s': cannot create a file in folder '%s': %s", what, path, dir,
                     strerror(errno));
  close(fd);
  unlink(probe);
  return TL_OK;
}

tl_status tl_out_open(tl_out *o, const char *path, const char *what, tl_error *err) {
  memset(o, 0, sizeof *o);
  snprintf(o->what, sizeof o->what, "%s", what ? what : "the output");
  tl_status s = classify(path, o->what, &o->through, o->target, sizeof o->target, err);
  if (s) return s;
  if (o->through) {
    /* never O_CREAT or O_TRUNC: the node stays what it is */
    int fd = open(o->target, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return out_error(err, path, "cannot write %s '%s': %s", o->what, path, strerror(errno));
    o->f = fdopen(fd, "w");
    if (!o->f) {
      int e = errno;
      close(fd);
      return out_error(err, path, "cannot write %s '%s': %s", o->what, path, strerror(e));
    }
    return TL_OK;
  }
  if (snprintf(o->tmp, sizeof o->tmp, "%s.tmpXXXXXX", o->target) >= (int)sizeof o->tmp)
    return out_error(err, path, "cannot write %s '%s': the path is too long", o->what, path);
  int fd = mkstemp(o->tmp);
  if (fd < 0) {
    o->tmp[0] = '\0';
    return out_error(err, path, "cannot write %s '%s': %s", o->what, path, strerror(errno));
  }
  /* mkstemp makes 0600; an existing file keeps its mode, a new one gets the umask's */
  struct stat old;
  mode_t mode;
  if (stat(o->target, &old) == 0) {
    mode = old.st_mode & 07777;
  } else {
    mode_t mask = umask(0);
    umask(mask);
    mode = 0666 & ~mask;
  }
  if (fchmod(fd, mode) != 0) { /* the file is still written, only its mode differs */
  }
  o->f = fdopen(fd, "w");
  if (!o->f) {
    int e = errno;
    close(fd);
    unlink(o->tmp);
    o->tmp[0] = '\0';
    return out_error(err, path, "cannot write %s '%s': %s", o->what, path, strerror(e));
  }
  return TL_OK;
}

tl_status tl_out_commit(tl_out *o, int ok, tl_error *err) {
  if (!o->f) return out_error(err, o->target, "cannot write %s '%s': not open", o->what, o->target);
  int e = 0;
  if (ferror(o->f)) ok = 0, e = errno;
  if (ok && fflush(o->f) != 0) ok = 0, e = errno;
  if (ok && !o->through && fsync(fileno(o->f)) != 0) ok = 0, e = errno;
  if (fclose(o->f) != 0 && ok) ok = 0, e = errno;
  o->f = NULL;
  if (!o->through) {
    if (ok && rename(o->tmp, o->target) != 0) ok = 0, e = errno;
    if (!ok) unlink(o->tmp);
  }
  o->tmp[0] = '\0';
  if (!ok) return out_error(err, o->target, "cannot write %s '%s': %s", o->what, o->target, e ? strerror(e) : "write error");
  return TL_OK;
}

tl_status tl_write_file(const char *path, const void *data, size_t n, const char *what, tl_error *err) {
  tl_out o;
  tl_status s = tl_out_open(&o, path, what, err);
  if (s) return s;
  return tl_out_commit(&o, fwrite(data, 1, n, o.f) == n, err);
}

long tl_read_head(const char *path, char *buf, size_t cap) {
  if (!path || !buf || cap == 0) return -1;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -1;
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    return -1;
  }
  size_t n = 0;
  while (n + 1 < cap) {
    ssize_t r = read(fd, buf + n, cap - 1 - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      close(fd);
      return -1;
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  close(fd);
  buf[n] = '\0';
  return (long)n;
}
