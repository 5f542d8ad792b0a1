/* Writing recordings: base64, the self-contained HTML page, CSV, and the
 * check that a path can be written before a long run. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/file.h"
#include "record/record_internal.h"

static const char b64chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Base64 of n bytes into out (4 * ceil(n / 3) characters, no NUL). */
static void base64(const unsigned char *in, size_t n, char *out) {
  size_t i = 0, k = 0;
  for (; i + 2 < n; i += 3) {
    unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];
    out[k++] = b64chars[v >> 18], out[k++] = b64chars[(v >> 12) & 63];
    out[k++] = b64chars[(v >> 6) & 63], out[k++] = b64chars[v & 63];
  }
  if (i < n) {
    unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0);
    out[k++] = b64chars[v >> 18], out[k++] = b64chars[(v >> 12) & 63];
    out[k++] = i + 1 < n ? b64chars[(v >> 6) & 63] : '=';
    out[k++] = '=';
  }
}

cJSON *tl_rec_base64_item(const void *data, size_t n) {
  size_t len = 4 * ((n + 2) / 3);
  char *s = malloc(len + 1);
  if (!s) return NULL;
  base64(data, n, s);
  s[len] = '\0';
  cJSON *item = cJSON_CreateString(s);
  free(s);
  return item;
}

char *tl_rec_json_print(const cJSON *root, size_t *len) {
  char *text = cJSON_PrintUnformatted(root);
  if (!text) return NULL;
  size_t n = 0, lt = 0;
  for (const char *p = text; *p; ++p) n++, lt += *p == '<';
  char *out = malloc(n + 5 * lt + 1);
  if (out) {
    size_t k = 0;
    for (const char *p = text; *p; ++p) {
      if (*p == '<') memcpy(out + k, "\\u003c", 6), k += 6;
      else out[k++] = *p;
    }
    out[k] = '\0';
    if (len) *len = k;
  }
  free(text);
  return out;
}

int tl_recorder_have_viewer(void) { return tl_viewer_page_len > 0; }

/* ------------------------------------------------------------ files */

/* Base64 of n bytes streamed to f. */
static int write_base64(FILE *f, const void *data, size_t n) {
  enum { CHUNK = 3 * 4096 };
  char buf[4 * (CHUNK / 3)];
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i += CHUNK) {
    size_t m = n - i < CHUNK ? n - i : CHUNK;
    base64(p + i, m, buf);
    if (fwrite(buf, 1, 4 * ((m + 2) / 3), f) != 4 * ((m + 2) / 3)) return -1;
  }
  return 0;
}

static int write_blob(FILE *f, const char *key, const void *data, size_t n) {
  if (fprintf(f, ",\"%s\":\"", key) < 0) return -1;
  if (write_base64(f, data, n)) return -1;
  return fputc('"', f) == EOF ? -1 : 0;
}

/* The recording's JSON: the scene, then the frame arrays. */
/* ,"key":"text" with text JSON-escaped. */
static int write_json_string(FILE *f, const char *key, const char *text) {
  if (fprintf(f, ",\"%s\":\"", key) < 0) return -1;
  for (const unsigned char *p = (const unsigned char *)text; *p; ++p) {
    int bad = *p == '"' || *p == '\\' || *p < 0x20 || *p == '<' || *p == '>' || *p == '&';
    if (bad ? fprintf(f, "\\u%04x", *p) < 0 : fputc(*p, f) == EOF) return -1;
  }
  return fputc('"', f) == EOF ? -1 : 0;
}

/* The recording's JSON: the scene (scene_len bytes ending with '}'), then the frame arrays. */
static int write_data(FILE *f, const char *scene, size_t scene_len, const char *diverged, const float *frames,
                      long long nframe, int F, const uint32_t *cstart, const float *contacts, long long ncontact) {
  if (fwrite(scene, 1, scene_len - 1, f) != scene_len - 1) return -1; /* without its '}' */
  if (diverged && write_json_string(f, "diverged", diverged)) return -1;
  if (fprintf(f, ",\"nframe\":%lld,\"ncontact\":%lld", nframe, ncontact) < 0) return -1;
  if (write_blob(f, "frames", frames, (size_t)nframe * (size_t)F * sizeof(float))) return -1;
  if (write_blob(f, "contact_start", cstart, (size_t)(nframe + 1) * sizeof(uint32_t))) return -1;
  if (write_blob(f, "contacts", contacts, (size_t)ncontact * TL_REC_CONTACT_FLOATS * sizeof(float))) return -1;
  return fputc('}', f) == EOF ? -1 : 0;
}

/* The page with the data in place of its marker; 0 or -1 (a write failed, or no marker). */
static int write_page(FILE *f, const char *scene, size_t scene_len, const char *diverged, const float *frames,
                      long long nframe, int F, const uint32_t *cstart, const float *contacts, long long ncontact) {
  const char *page = (const char *)tl_viewer_page;
  const char *mark = strstr(page, TL_REC_PAGE_MARKER);
  if (!mark) return -1;
  size_t head = (size_t)(mark - page);
  const char *tail = mark + strlen(TL_REC_PAGE_MARKER);
  size_t tail_len = tl_viewer_page_len - (size_t)(tail - page);
  int ok = fwrite(page, 1, head, f) == head;
  ok = ok && fputs("<script type=\"application/json\" id=\"talus-data\">", f) >= 0;
  ok = ok && write_data(f, scene, scene_len, diverged, frames, nframe, F, cstart, contacts, ncontact) == 0;
  ok = ok && fputs("</script>", f) >= 0;
  ok = ok && fwrite(tail, 1, tail_len, f) == tail_len;
  return ok ? 0 : -1;
}

char *tl_rec_page_from_frames(const char *scene, size_t scene_len, const float *frames, long long nframe, int F,
                              const uint32_t *cstart, const float *contacts, long long ncontact, size_t *len) {
  if (!tl_recorder_have_viewer()) return NULL;
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  if (!f) return NULL;
  int ok = write_page(f, scene, scene_len, NULL, frames, nframe, F, cstart, contacts, ncontact) == 0;
  ok = fclose(f) == 0 && ok;
  if (!ok) {
    free(buf);
    return NULL;
  }
  if (len) *len = n;
  return buf;
}

tl_status tl_recorder_write_html(const tl_recorder *r, const char *path, tl_error *err) {
  if (!r) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "rec", "rec must not be NULL");
  if (!tl_recorder_have_viewer())
    return tl_error_set(err, TL_ERR_UNSUPPORTED, NULL, 0, NULL,
                        "cannot write '%s': this Talus was built without the web viewer (web/node_modules was "
                        "missing when CMake ran: run scripts/setup.sh, or `npm ci` in web/, then CMake again)",
                        path ? path : "");
  if (!strstr((const char *)tl_viewer_page, TL_REC_PAGE_MARKER))
    return tl_error_set(err, TL_ERR_UNSUPPORTED, NULL, 0, NULL, "the embedded viewer page has no data marker");
  tl_out o;
  tl_status st = tl_out_open(&o, path, "the recording", err);
  if (st) return st;
  int ok = write_page(o.f, r->scene, r->scene_len, r->diverged, r->frames, r->nframe, r->L.floats, r->cstart,
                      r->contacts, r->ncontact) == 0;
  return tl_out_commit(&o, ok, err);
}

/* ------------------------------------------------------------ CSV */

/* Column names of the main system's part, from the scene's plot names. */
static int csv_names(FILE *f, const tl_recorder *r) {
  cJSON *root = cJSON_Parse(r->scene);
  cJSON *plots = cJSON_GetObjectItem(root, "plots");
  static const char *const keys[3] = {"joint_q", "joint_tau", "body"};
  static const char *const prefix[3] = {"q_", "tau_", "fn_"};
  int ok = plots != NULL;
  for (int k = 0; ok && k < 3; ++k) {
    const cJSON *x;
    cJSON_ArrayForEach(x, cJSON_GetObjectItem(plots, keys[k])) {
      ok = ok && fprintf(f, ",%s%s", prefix[k], cJSON_GetStringValue(x) ? cJSON_GetStringValue(x) : "") >= 0;
    }
  }
  cJSON_Delete(root);
  return ok ? 0 : -1;
}

static int csv_row(FILE *f, const tl_recorder *r, const float *x) {
  const tl_rec_layout *L = &r->L;
  int ok = fprintf(f, "%.9g", x[L->time]) >= 0;
  if (r->main >= 0) {
    const float *base = x + L->poses + 7 * r->body0[r->main];
    for (int i = 0; i < 3; ++i) ok = ok && fprintf(f, ",%.9g", base[i]) >= 0;
    for (int i = 0; i < 3; ++i) ok = ok && fprintf(f, ",%.9g", x[L->base_vel + i]) >= 0;
    for (int i = 0; i < L->njq; ++i) ok = ok && fprintf(f, ",%.9g", x[L->joint_q + i]) >= 0;
    for (int i = 0; i < L->njv; ++i) ok = ok && fprintf(f, ",%.9g", x[L->joint_tau + i]) >= 0;
    for (int i = 0; i < L->nbm; ++i) ok = ok && fprintf(f, ",%.9g", x[L->body_fn + i]) >= 0;
  }
  double ke = x[L->energy], pe = x[L->energy + 1];
  ok = ok && fprintf(f, ",%.9g,%.9g,%.9g\n", ke, pe, ke + pe) >= 0;
  return ok ? 0 : -1;
}

tl_status tl_recorder_write_csv(const tl_recorder *r, const char *path, tl_error *err) {
  if (!r) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "rec", "rec must not be NULL");
  tl_out o;
  tl_status st = tl_out_open(&o, path, "the CSV file", err);
  if (st) return st;
  int ok = fputs("t", o.f) >= 0;
  if (r->main >= 0) ok = ok && fputs(",base_x,base_y,base_z,base_vx,base_vy,base_vz", o.f) >= 0 && csv_names(o.f, r) == 0;
  ok = ok && fputs(",kinetic,potential,energy\n", o.f) >= 0;
  for (long long k = 0; ok && k < r->nframe; ++k) ok = csv_row(o.f, r, r->frames + k * r->L.floats) == 0;
  if (ok && r->diverged) ok = fprintf(o.f, "# diverged: %s\n", r->diverged) >= 0; /* rows end at the last finite state */
  return tl_out_commit(&o, ok, err);
}

/* ------------------------------------------------------------ path check */

tl_status tl_recorder_check_path(const char *path, const char *what, tl_error *err) {
  return tl_out_check(path, what ? what : "output", err);
}
