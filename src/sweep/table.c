/* Sweep rows: records, the CSV (one row per sample, numbers printed so
 * that they read back exactly), appending rows as they finish, reading a
 * partial CSV back for --resume, and the final rewrite in sample order. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/file.h"
#include "sweep/sweep_internal.h"

sw_record *sw_record_new(const tl_sweep *sw, long sample) {
  sw_record *r = calloc(1, sizeof(sw_record) + ((size_t)sw->nparam_column + 1) * sizeof(double));
  if (r) r->sample = sample;
  return r;
}

int sw_row_cap(const tl_sweep *sw) { return 96 + (sw->nparam_column + TL_SWEEP_NOUTCOME) * 28 + 2 * SW_MESSAGE_LEN + 16; }

/* ------------------------------------------------------------ format */

/* %.17g reads back to the same double (IEEE 754 binary64); nan / inf / -inf spelled out. */
static int put_number(char *buf, size_t cap, double v) {
  if (isnan(v)) return snprintf(buf, cap, ",nan");
  if (isinf(v)) return snprintf(buf, cap, v > 0 ? ",inf" : ",-inf");
  return snprintf(buf, cap, ",%.17g", v);
}

int sw_format_row(const tl_sweep *sw, const sw_record *rec, char *buf, int cap) {
  size_t c = (size_t)cap, n = 0;
  int k = snprintf(buf, c, "%ld,%llu,%016llx", rec->sample, (unsigned long long)sw->seed, (unsigned long long)sw->hash);
  if (k < 0 || (size_t)k >= c) return -1;
  n = (size_t)k;
  for (int i = 0; i < sw->nparam_column; ++i) {
    k = put_number(buf + n, c - n, rec->params[i]);
    if (k < 0 || (n += (size_t)k) >= c) return -1;
  }
  k = snprintf(buf + n, c - n, ",%s", tl_sweep_status_name((tl_sweep_status)rec->status));
  if (k < 0 || (n += (size_t)k) >= c) return -1;
  for (int i = 0; i < TL_SWEEP_NOUTCOME; ++i) {
    k = put_number(buf + n, c - n, rec->outcome[i]);
    if (k < 0 || (n += (size_t)k) >= c) return -1;
  }
  if (n + 2 >= c) return -1;
  buf[n++] = ',';
  if (rec->message[0]) { /* RFC 4180 quoting: "..." with "" for a quote */
    buf[n++] = '"';
    for (const char *p = rec->message; *p; ++p) {
      if (n + 4 >= c) return -1;
      if (*p == '"') buf[n++] = '"';
      buf[n++] = (*p == '\n' || *p == '\r') ? ' ' : *p;
    }
    if (n + 3 >= c) return -1;
    buf[n++] = '"';
  }
  buf[n++] = '\n';
  buf[n] = '\0';
  return (int)n;
}

/* The header line (with '\n'). */
static char *header(const tl_sweep *sw) {
  size_t cap = (size_t)sw->ncolumn * SW_NAME_LEN + 2, n = 0;
  char *h = malloc(cap);
  if (!h) return NULL;
  h[0] = '\0';
  for (int i = 0; i < sw->ncolumn; ++i) tl_str_append(h, cap, &n, "%s%s", i ? "," : "", sw->column[i]);
  tl_str_append(h, cap, &n, "\n");
  return h;
}

/* ------------------------------------------------------------ parse */

/* Next field of a CSV line at *p (quoted or not) into out (cap); advances *p past the
 * separating comma. Returns 0, or -1 for a malformed quoted field. *last: no comma followed. */
static int next_field(const char **p, char *out, size_t cap, int *last) {
  const char *s = *p;
  size_t n = 0;
  if (*s == '"') {
    ++s;
    for (;;) {
      if (!*s) return -1;
      if (*s == '"') {
        if (s[1] == '"') s++;
        else break;
      }
      if (n + 1 < cap) out[n++] = *s;
      ++s;
    }
    ++s; /* closing quote */
    if (*s && *s != ',') return -1;
  } else {
    while (*s && *s != ',') {
      if (n + 1 < cap) out[n++] = *s;
      ++s;
    }
  }
  out[n] = '\0';
  *last = *s != ',';
  *p = *s ? s + 1 : s;
  return 0;
}

static int parse_double_field(const char *f, double *v) {
  char *end = NULL;
  *v = strtod(f, &end);
  return (end != f && *end == '\0') ? 0 : -1;
}

int sw_parse_row(const tl_sweep *sw, const char *line, sw_record *rec, char *msg, int cap) {
  char f[SW_MESSAGE_LEN + 64];
  const char *p = line;
  int last = 0;
  for (int col = 0; col < sw->ncolumn; ++col) {
    if (last) {
      snprintf(msg, (size_t)cap, "%d fields, expected %d", col, sw->ncolumn);
      return -1;
    }
    if (next_field(&p, f, sizeof f, &last) != 0) {
      snprintf(msg, (size_t)cap, "column %s: malformed quoted field", sw->column[col]);
      return -1;
    }
    int bad = 0;
    char *end = NULL;
    int status_col = 3 + sw->nparam_column;
    if (col == 0) {
      long v = strtol(f, &end, 10);
      bad = end == f || *end || v < 0;
      rec->sample = v;
    } else if (col == 1) {
      unsigned long long v = strtoull(f, &end, 10);
      if (end == f || *end || v != (unsigned long long)sw->seed) {
        snprintf(msg, (size_t)cap, "seed %s is not this sweep's (%llu)", f, (unsigned long long)sw->seed);
        return -1;
      }
    } else if (col == 2) {
      unsigned long long v = strtoull(f, &end, 16);
      if (end == f || *end || v != (unsigned long long)sw->hash) {
        snprintf(msg, (size_t)cap, "spec %s is not this sweep's (%016llx): the row was written by another sweep "
                 "(robot, controller, duration, parameters, seed, or a file it reads differ)", f, (unsigned long long)sw->hash);
        return -1;
      }
    } else if (col < status_col) {
      bad = parse_double_field(f, &rec->params[col - 3]);
    } else if (col == status_col) {
      bad = 1;
      for (int s = TL_SWEEP_OK; s <= TL_SWEEP_ERROR; ++s)
        if (strcmp(f, tl_sweep_status_name((tl_sweep_status)s)) == 0) rec->status = s, bad = 0;
    } else if (col < status_col + 1 + TL_SWEEP_NOUTCOME) {
      bad = parse_double_field(f, &rec->outcome[col - status_col - 1]);
    } else {
      size_t len = strlen(f);
      if (len >= sizeof rec->message) len = sizeof rec->message - 1;
      memcpy(rec->message, f, len);
      rec->message[len] = '\0';
    }
    if (bad) {
      snprintf(msg, (size_t)cap, "column %s: '%.60s' is not a valid value", sw->column[col], f);
      return -1;
    }
  }
  if (!last) {
    snprintf(msg, (size_t)cap, "more than %d fields", sw->ncolumn);
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------------ results */

static int write_all(int fd, const char *buf, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, buf, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    buf += w;
    n -= (size_t)w;
  }
  return 0;
}

static tl_status io_error(const char *path, const char *what, tl_error *err) {
  return sw_error(err, TL_ERR_IO, path, 0, "out", "cannot %s: %s", what, strerror(errno));
}

/* Every row of the table in sample order, by the output rules of base/file.h:
 * a new or regular file is replaced atomically, a device or FIFO written through. */
static tl_status write_sorted(const tl_sweep_results *r, tl_error *err) {
  const tl_sweep *sw = r->sw;
  char *h = header(sw), *row = malloc((size_t)sw_row_cap(sw));
  tl_status st = TL_OK;
  if (!h || !row) {
    st = sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
    goto done;
  }
  tl_out o;
  st = tl_out_open(&o, r->csv, "the sweep table", err);
  if (st != TL_OK) goto done;
  int ok = fputs(h, o.f) >= 0;
  for (long i = 0; i < r->n && ok; ++i) {
    if (!r->row[i]) continue;
    int k = sw_format_row(sw, r->row[i], row, sw_row_cap(sw));
    ok = k > 0 && fwrite(row, 1, (size_t)k, o.f) == (size_t)k;
  }
  st = tl_out_commit(&o, ok, err);
done:
  free(h);
  free(row);
  return st;
}

/* The first parameter column of a read-back row that differs from what the sweep draws for its
 * sample (sw_draw: seed and sample decide every parameter), or -1 if all agree bit for bit (the
 * CSV's %.17g reads back exactly). expect: nparam_column doubles of scratch. */
static int params_differ(const tl_sweep *sw, const sw_record *rec, double *expect) {
  sw_draw(sw, rec->sample, expect);
  for (int c = 0; c < sw->nparam_column; ++c) {
    double a = rec->params[c], b = expect[c];
    if (!(a == b || (isnan(a) && isnan(b)))) return c;
  }
  return -1;
}

/* Read the rows of an existing CSV of this sweep into r. */
static tl_status read_back(tl_sweep_results *r, tl_error *err) {
  const tl_sweep *sw = r->sw;
  char *text = NULL;
  size_t len = 0;
  struct stat sb;
  if (stat(r->csv, &sb) != 0) return TL_OK; /* nothing to resume */
  tl_status st = tl_read_file(r->csv, (size_t)1 << 34, &text, &len, err);
  if (st != TL_OK) return st;
  char *h = header(sw);
  if (!h) {
    free(text);
    return sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  }
  size_t hl = strlen(h);
  if (len > 0 && (len < hl || memcmp(text, h, hl) != 0)) {
    h[hl - 1] = '\0';
    st = sw_error(err, TL_ERR_INVALID, r->csv, 1, "out", "the header is not this sweep's (expected "
                      "'%.600s'): write to another file or remove it", h);
  }
  free(h);
  char *line = len >= hl ? text + hl : text + len;
  double *expect = malloc(((size_t)sw->nparam_column + 1) * sizeof(double));
  int bad_col = -1;
  if (!expect && st == TL_OK) st = sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  for (int lineno = 2; st == TL_OK && *line; ++lineno) {
    char *nl = strchr(line, '\n');
    if (!nl) break; /* a row cut short when the run was killed: run again */
    *nl = '\0';
    sw_record *rec = sw_record_new(sw, 0);
    char msg[400];
    if (!rec) {
      st = sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
    } else if (sw_parse_row(sw, line, rec, msg, sizeof msg) != 0) {
      st = sw_error(err, TL_ERR_INVALID, r->csv, lineno, "out", "%s", msg);
    } else if (rec->sample >= r->n) {
      st = sw_error(err, TL_ERR_INVALID, r->csv, lineno, "samples", "a row of sample %ld, but the sweep has "
                        "%ld samples", rec->sample, r->n);
    } else if ((bad_col = params_differ(sw, rec, expect)) >= 0) {
      st = sw_error(err, TL_ERR_INVALID, r->csv, lineno, "out", "column %s of sample %ld is %.17g, but seed %llu "
                        "and sample %ld give %.17g: the row was not written by this sweep (write to another file "
                        "or remove it)", sw->column[3 + bad_col], rec->sample, rec->params[bad_col],
                        (unsigned long long)sw->seed, rec->sample, expect[bad_col]);
    } else if (!r->row[rec->sample]) {
      r->row[rec->sample] = rec;
      rec = NULL;
      r->count++;
      r->resumed++;
    }
    free(rec);
    line = nl + 1;
  }
  free(text);
  free(expect);
  if (st == TL_OK)
    for (long i = 0; i < r->n; ++i) r->failed += r->row[i] && r->row[i]->status != TL_SWEEP_OK;
  return st;
}

tl_status sw_results_open(const tl_sweep *sw, const char *csv, int resume, tl_sweep_results **out, tl_error *err) {
  *out = NULL;
  tl_sweep_results *r = calloc(1, sizeof(*r));
  if (!r) return sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  r->sw = sw;
  r->n = sw->samples;
  r->fd = -1;
  r->row = calloc((size_t)r->n, sizeof(sw_record *));
  r->csv = csv && csv[0] ? strdup(csv) : NULL;
  tl_status st = r->row && (!csv || !csv[0] || r->csv) ? TL_OK : sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  r->stream = r->csv && tl_out_is_stream(r->csv);
  if (st == TL_OK && r->csv && resume && !r->stream) st = read_back(r, err); /* a stream has nothing to read back */
  /* a fresh file with the header and the rows read back (a partial last line is gone); a device or
   * FIFO (/dev/stdout, a pipe) gets the table once, at the end */
  if (st == TL_OK && r->csv && !r->stream) st = write_sorted(r, err);
  if (st == TL_OK && r->csv && !r->stream) {
    r->fd = open(r->csv, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (r->fd < 0) st = io_error(r->csv, "open for appending", err);
  }
  if (st != TL_OK) {
    tl_sweep_results_free(r);
    return st;
  }
  *out = r;
  return TL_OK;
}

tl_status sw_results_add(tl_sweep_results *r, sw_record *rec, tl_error *err) {
  if (rec->sample < 0 || rec->sample >= r->n || r->row[rec->sample]) {
    free(rec);
    return TL_OK;
  }
  r->row[rec->sample] = rec;
  r->count++;
  r->ran++;
  r->failed += rec->status != TL_SWEEP_OK;
  if (r->fd < 0) return TL_OK;
  char buf[4096];
  int cap = sw_row_cap(r->sw);
  char *row = cap <= (int)sizeof buf ? buf : malloc((size_t)cap);
  if (!row) return sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  int k = sw_format_row(r->sw, rec, row, cap);
  tl_status st = TL_OK;
  if (k <= 0 || write_all(r->fd, row, (size_t)k) != 0) st = io_error(r->csv, "append a row", err);
  if (row != buf) free(row);
  return st;
}

tl_status sw_results_finish(tl_sweep_results *r, tl_error *err) {
  tl_status st = TL_OK;
  if (r->fd >= 0) {
    close(r->fd);
    r->fd = -1;
  }
  if (r->csv) st = write_sorted(r, err);
  free(r->view);
  r->view = calloc((size_t)r->count + 1, sizeof(tl_sweep_result));
  if (!r->view) return sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  r->nview = 0;
  for (long i = 0; i < r->n; ++i) {
    const sw_record *rec = r->row[i];
    if (!rec) continue;
    tl_sweep_result *v = &r->view[r->nview++];
    v->sample = rec->sample;
    v->status = (tl_sweep_status)rec->status;
    v->params = rec->params;
    memcpy(v->outcome, rec->outcome, sizeof v->outcome);
    v->message = rec->message;
  }
  return st;
}

long tl_sweep_results_count(const tl_sweep_results *r) { return r ? r->nview : 0; }
const tl_sweep_result *tl_sweep_results_row(const tl_sweep_results *r, long i) {
  return r && i >= 0 && i < r->nview ? &r->view[i] : NULL;
}
int tl_sweep_results_complete(const tl_sweep_results *r) { return r && r->count == r->n; }
long tl_sweep_results_ran(const tl_sweep_results *r) { return r ? r->ran : 0; }

void tl_sweep_results_free(tl_sweep_results *r) {
  if (!r) return;
  if (r->fd >= 0) close(r->fd);
  for (long i = 0; r->row && i < r->n; ++i) free(r->row[i]);
  free(r->row);
  free(r->view);
  free(r->csv);
  free(r);
}
