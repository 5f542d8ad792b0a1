/* The live view's control channel (record_control.h): control messages from
 * the page parsed with cJSON and validated, the event queue the simulation
 * polls (tl_viewer_poll), the status and parameter messages sent back.
 * Protocol: docs/viewer.md ("Protocol"). */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/error.h"
#include "record/record_control.h"
#include "record/record_internal.h"

struct tl_live_control {
  pthread_mutex_t lock;
  const tl_world *world;
  tl_viewer_event queue[TL_CTL_QUEUE];
  int head, count;
  long long dropped;
  tl_viewer_status status;
  int have_status;
  tl_viewer_param params[TL_CTL_MAX_PARAMS];
  int nparam;
  long long params_version;
  int polled; /* the program has called tl_viewer_poll: it takes controls */
};

tl_live_control *tl_ctl_create(const tl_world *world) {
  tl_live_control *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  pthread_mutex_init(&c->lock, NULL);
  c->world = world;
  c->status.rtf = NAN;
  c->status.speed = 1;
  return c;
}

void tl_ctl_free(tl_live_control *c) {
  if (!c) return;
  pthread_mutex_destroy(&c->lock);
  free(c);
}

/* ------------------------------------------------------------ parsing */

static int bad(char *why, size_t cap, const char *fmt, const char *a) {
  snprintf(why, cap, fmt, a);
  return -1;
}

/* A finite number field; 0, or -1 with why set. */
static int number(const cJSON *root, const char *key, double lo, double hi, double *out, char *why, size_t cap) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(root, key);
  if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble))
    return bad(why, cap, "'%s' must be a finite number", key);
  if (x->valuedouble < lo || x->valuedouble > hi) {
    snprintf(why, cap, "'%s' is %g: expected %g .. %g", key, x->valuedouble, lo, hi);
    return -1;
  }
  *out = x->valuedouble;
  return 0;
}

/* [a, b, c] of finite numbers with |each| <= lim. */
static int vec3(const cJSON *root, const char *key, double lim, double out[3], char *why, size_t cap) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(root, key);
  if (!cJSON_IsArray(x) || cJSON_GetArraySize(x) != 3)
    return bad(why, cap, "'%s' must be an array of 3 numbers", key);
  for (int i = 0; i < 3; ++i) {
    const cJSON *e = cJSON_GetArrayItem(x, i);
    if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || fabs(e->valuedouble) > lim) {
      snprintf(why, cap, "'%s'[%d] must be a finite number of magnitude at most %g", key, i, lim);
      return -1;
    }
    out[i] = e->valuedouble;
  }
  return 0;
}

/* The body named by a force message: "body" (a URDF link name, fixed links merged into their body
 * count too) in "system" (optional index) or the first system that has it. */
static int find_body(const tl_live_control *c, const cJSON *root, tl_viewer_event *ev, char *why, size_t cap) {
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(root, "body");
  if (!cJSON_IsString(b) || !b->valuestring[0] || strlen(b->valuestring) > 200)
    return bad(why, cap, "'%s' must be a link name", "body");
  int ns = tl_world_nsystem(c->world), lo = 0, hi = ns;
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "system");
  if (s) {
    double k;
    if (number(root, "system", 0, ns - 1, &k, why, cap) != 0) return -1;
    if (k != floor(k)) return bad(why, cap, "'%s' must be an integer", "system");
    lo = (int)k, hi = lo + 1;
  }
  for (int i = lo; i < hi; ++i) {
    const tl_model *m = tl_system_model(tl_world_system((tl_world *)c->world, i));
    int body = m ? tl_model_body_index(m, b->valuestring) : -1;
    if (body >= 0) {
      ev->system = i, ev->body = body;
      return 0;
    }
  }
  return bad(why, cap, "no link named '%.100s' in the world", b->valuestring);
}

static int parse_force(const tl_live_control *c, const cJSON *root, tl_viewer_event *ev, char *why, size_t cap) {
  if (find_body(c, root, ev, why, cap) != 0) return -1;
  if (vec3(root, "point", TL_VIEWER_MAX_POINT, ev->point, why, cap) != 0) return -1;
  if (vec3(root, "force", TL_VIEWER_MAX_FORCE, ev->force, why, cap) != 0) return -1;
  double f = sqrt(ev->force[0] * ev->force[0] + ev->force[1] * ev->force[1] + ev->force[2] * ev->force[2]);
  if (f > TL_VIEWER_MAX_FORCE) {
    snprintf(why, cap, "'force' has magnitude %g N: at most %g", f, TL_VIEWER_MAX_FORCE);
    return -1;
  }
  if (number(root, "duration", 0, TL_VIEWER_MAX_DURATION, &ev->duration, why, cap) != 0) return -1;
  if (!(ev->duration > 0)) return bad(why, cap, "'%s' must be > 0 s", "duration");
  if (cJSON_GetObjectItemCaseSensitive(root, "id")) {
    double id;
    if (number(root, "id", 0, 15, &id, why, cap) != 0) return -1;
    if (id != floor(id)) return bad(why, cap, "'%s' must be an integer", "id");
    ev->id = (int)id;
  }
  return 0;
}

static int parse_param(tl_live_control *c, const cJSON *root, tl_viewer_event *ev, char *why, size_t cap) {
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(root, "name");
  if (!cJSON_IsString(n) || !n->valuestring[0] || strlen(n->valuestring) >= sizeof ev->name)
    return bad(why, cap, "'%s' must be the name of a declared parameter", "name");
  pthread_mutex_lock(&c->lock);
  const tl_viewer_param *p = NULL;
  for (int i = 0; i < c->nparam && !p; ++i)
    if (strcmp(c->params[i].name, n->valuestring) == 0) p = &c->params[i];
  double lo = p ? p->min : 0, hi = p ? p->max : 0;
  pthread_mutex_unlock(&c->lock);
  if (!p) return bad(why, cap, "no parameter named '%.60s'", n->valuestring);
  snprintf(ev->name, sizeof ev->name, "%s", n->valuestring);
  return number(root, "value", lo, hi, &ev->value, why, cap);
}

tl_ctl_kind tl_ctl_parse(tl_live_control *c, const char *msg, size_t len, tl_viewer_event *ev, char *why,
                         size_t cap) {
  memset(ev, 0, sizeof *ev);
  why[0] = '\0';
  if (len > TL_CTL_MAX_MESSAGE) {
    snprintf(why, cap, "message of %zu bytes: at most %d", len, TL_CTL_MAX_MESSAGE);
    return TL_CTL_MALFORMED;
  }
  cJSON *root = cJSON_ParseWithLength(msg, len);
  if (!root || !cJSON_IsObject(root)) {
    cJSON_Delete(root);
    snprintf(why, cap, "not a JSON object");
    return TL_CTL_MALFORMED;
  }
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "type");
  const char *t = cJSON_IsString(type) ? type->valuestring : NULL;
  int r = 0;
  tl_ctl_kind kind = TL_CTL_EVENT;
  if (!t) {
    r = bad(why, cap, "'%s' must be a string", "type");
  } else if (strcmp(t, "hello") == 0 || strcmp(t, "status") == 0) {
    kind = TL_CTL_QUERY;
  } else if (strcmp(t, "pause") == 0) {
    ev->type = TL_VIEWER_EVENT_PAUSE;
  } else if (strcmp(t, "run") == 0) {
    ev->type = TL_VIEWER_EVENT_RUN;
  } else if (strcmp(t, "reset") == 0) {
    ev->type = TL_VIEWER_EVENT_RESET;
  } else if (strcmp(t, "snapshot") == 0) {
    ev->type = TL_VIEWER_EVENT_SNAPSHOT;
  } else if (strcmp(t, "restore") == 0) {
    ev->type = TL_VIEWER_EVENT_RESTORE;
    pthread_mutex_lock(&c->lock);
    int ns = c->status.nsnapshot;
    pthread_mutex_unlock(&c->lock);
    double k = 0;
    if (ns == 0) r = bad(why, cap, "%s", "no saved state to restore (save one first)");
    if (r == 0) r = number(root, "index", 0, ns - 1, &k, why, cap);
    if (r == 0 && k != floor(k)) r = bad(why, cap, "'%s' must be an integer", "index");
    ev->n = (long long)k;
  } else if (strcmp(t, "step") == 0) {
    ev->type = TL_VIEWER_EVENT_STEP;
    double n = 1;
    if (cJSON_GetObjectItemCaseSensitive(root, "n")) r = number(root, "n", 1, TL_VIEWER_MAX_STEP, &n, why, cap);
    if (r == 0 && n != floor(n)) r = bad(why, cap, "'%s' must be an integer", "n");
    ev->n = (long long)n;
  } else if (strcmp(t, "speed") == 0) {
    ev->type = TL_VIEWER_EVENT_SPEED;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "factor");
    if (cJSON_IsString(f) && strcmp(f->valuestring, "max") == 0)
      ev->factor = 0;
    else
      r = number(root, "factor", TL_VIEWER_MIN_SPEED, TL_VIEWER_MAX_SPEED, &ev->factor, why, cap);
  } else if (strcmp(t, "force") == 0) {
    ev->type = TL_VIEWER_EVENT_FORCE;
    r = parse_force(c, root, ev, why, cap);
  } else if (strcmp(t, "param") == 0) {
    ev->type = TL_VIEWER_EVENT_PARAM;
    r = parse_param(c, root, ev, why, cap);
  } else {
    r = -1;
    snprintf(why, cap, "unknown type '%.40s' (pause, run, step, speed, reset, snapshot, restore, force, param, "
             "status)", t);
  }
  cJSON_Delete(root);
  return r != 0 ? TL_CTL_MALFORMED : kind;
}

/* ------------------------------------------------------------ queue, status, parameters */

void tl_ctl_count_dropped(tl_live_control *c) {
  pthread_mutex_lock(&c->lock);
  c->dropped++;
  pthread_mutex_unlock(&c->lock);
}

int tl_ctl_push(tl_live_control *c, const tl_viewer_event *ev) {
  pthread_mutex_lock(&c->lock);
  int ok = c->count < TL_CTL_QUEUE;
  if (ok) c->queue[(c->head + c->count++) % TL_CTL_QUEUE] = *ev;
  pthread_mutex_unlock(&c->lock);
  return ok ? 0 : -1;
}

int tl_ctl_accepts(tl_live_control *c) {
  pthread_mutex_lock(&c->lock);
  int p = c->polled;
  pthread_mutex_unlock(&c->lock);
  return p;
}

int tl_ctl_pop(tl_live_control *c, tl_viewer_event *ev) {
  pthread_mutex_lock(&c->lock);
  c->polled = 1;
  int got = c->count > 0;
  if (got) {
    *ev = c->queue[c->head];
    c->head = (c->head + 1) % TL_CTL_QUEUE;
    c->count--;
  }
  pthread_mutex_unlock(&c->lock);
  return got;
}

/* A JSON number: finite values as %.9g, others as null. */
static void jnum(char *buf, size_t cap, double x) {
  if (isfinite(x))
    snprintf(buf, cap, "%.9g", x);
  else
    snprintf(buf, cap, "null");
}

/* s with " and \ and control characters escaped (at most cap - 1 bytes, whole escapes only). */
static void jstr(char *out, size_t cap, const char *s) {
  size_t k = 0;
  for (; *s && k + 7 < cap; ++s) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      out[k++] = '\\', out[k++] = (char)ch;
    else if (ch < 0x20)
      k += (size_t)snprintf(out + k, cap - k, "\\u%04x", ch);
    else
      out[k++] = (char)ch;
  }
  out[k] = '\0';
}

size_t tl_ctl_status_json(tl_live_control *c, const char *error, int control, int answer, char *buf, size_t cap) {
  pthread_mutex_lock(&c->lock);
  tl_viewer_status st = c->status;
  long long dropped = c->dropped;
  int polled = c->polled;
  pthread_mutex_unlock(&c->lock);
  char t[40], sp[40], rtf[40], sig[40], cone[40], err[300] = "null", snaps[TL_VIEWER_MAX_SNAPSHOTS * 40 + 4] = "";
  size_t ks = 0;
  int ns = st.nsnapshot < 0 ? 0 : st.nsnapshot > TL_VIEWER_MAX_SNAPSHOTS ? TL_VIEWER_MAX_SNAPSHOTS : st.nsnapshot;
  for (int i = 0; i < ns; ++i) {
    char x[40];
    jnum(x, sizeof x, st.snapshot_time[i]);
    ks += (size_t)snprintf(snaps + ks, sizeof snaps - ks, "%s%s", i ? "," : "", x);
  }
  jnum(t, sizeof t, st.time);
  jnum(sp, sizeof sp, st.speed);
  jnum(rtf, sizeof rtf, st.rtf);
  jnum(sig, sizeof sig, st.solver.signorini);
  jnum(cone, sizeof cone, st.solver.cone);
  if (error) {
    char e[280];
    jstr(e, sizeof e, error);
    snprintf(err, sizeof err, "\"%s\"", e);
  }
  const char *ctl = control == 1 ? "you" : control == 0 ? "other" : control == 2 ? "shared" : "free";
  int n = snprintf(buf, cap,
                   "{\"type\":\"status\",\"answer\":%s,\"time\":%s,\"steps\":%lld,\"paused\":%s,\"speed\":%s,\"rtf\":%s,"
                   "\"dropped\":%lld,\"controls\":%s,\"control\":\"%s\",\"error\":%s,\"snapshots\":[%s],\"solver\":{\"iterations\":%d,\"contacts\":%d,"
                   "\"rows\":%d,\"converged\":%s,\"signorini\":%s,\"cone\":%s}}",
                   answer ? "true" : "false", t, st.steps, st.paused ? "true" : "false", sp, rtf, dropped, polled ? "true" : "false", ctl, err, snaps, st.solver.iterations,
                   st.solver.ncontact, st.solver.nrow, st.solver.converged ? "true" : "false", sig, cone);
  return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

char *tl_ctl_params_json(tl_live_control *c, size_t *len, long long *version) {
  pthread_mutex_lock(&c->lock);
  size_t nb = 0; /* bodies of every system: their masses go along (the page scales its drag force by them) */
  for (int i = 0; i < tl_world_nsystem(c->world); ++i)
    nb += (size_t)tl_model_nbody(tl_system_model(tl_world_system((tl_world *)c->world, i))) + 1;
  size_t cap = 64 + (size_t)c->nparam * 520 + nb * 48; /* above the longest entries: snprintf never truncates */
  char *buf = malloc(cap);
  if (buf) {
    size_t k = (size_t)snprintf(buf, cap, "{\"type\":\"params\",\"params\":[");
    for (int i = 0; i < c->nparam; ++i) {
      const tl_viewer_param *p = &c->params[i];
      char name[120], unit[60], lo[40], hi[40], v[40];
      jstr(name, sizeof name, p->name);
      jstr(unit, sizeof unit, p->unit);
      jnum(lo, sizeof lo, p->min);
      jnum(hi, sizeof hi, p->max);
      jnum(v, sizeof v, p->value);
      k += (size_t)snprintf(buf + k, cap - k, "%s{\"name\":\"%s\",\"unit\":\"%s\",\"min\":%s,\"max\":%s,\"value\":%s}",
                            i ? "," : "", name, unit, lo, hi, v);
    }
    k += (size_t)snprintf(buf + k, cap - k, "],\"masses\":[");
    for (int i = 0; i < tl_world_nsystem(c->world); ++i) {
      const tl_model *m = tl_system_model(tl_world_system((tl_world *)c->world, i));
      k += (size_t)snprintf(buf + k, cap - k, "%s[", i ? "," : "");
      for (int b = 0; b < tl_model_nbody(m); ++b) {
        char x[40];
        jnum(x, sizeof x, tl_model_body_mass(m, b));
        k += (size_t)snprintf(buf + k, cap - k, "%s%s", b ? "," : "", x);
      }
      k += (size_t)snprintf(buf + k, cap - k, "]");
    }
    k += (size_t)snprintf(buf + k, cap - k, "]}");
    *len = k;
  }
  *version = c->params_version;
  pthread_mutex_unlock(&c->lock);
  return buf;
}

long long tl_ctl_params_version(tl_live_control *c) {
  pthread_mutex_lock(&c->lock);
  long long v = c->params_version;
  pthread_mutex_unlock(&c->lock);
  return v;
}

void tl_ctl_set_status(tl_live_control *c, const tl_viewer_status *st) {
  pthread_mutex_lock(&c->lock);
  c->status = *st;
  c->have_status = 1;
  pthread_mutex_unlock(&c->lock);
}

tl_status tl_ctl_set_params(tl_live_control *c, const tl_viewer_param *p, int n, tl_error *err) {
  if (n < 0 || n > TL_CTL_MAX_PARAMS || (n > 0 && !p))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "params", "%d parameters: expected 0 .. %d", n,
                        TL_CTL_MAX_PARAMS);
  for (int i = 0; i < n; ++i) {
    const tl_viewer_param *q = &p[i];
    if (!q->name[0] || !memchr(q->name, '\0', sizeof q->name) || !memchr(q->unit, '\0', sizeof q->unit))
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "params", "parameter %d: empty or unterminated name or unit",
                          i);
    if (!isfinite(q->min) || !isfinite(q->max) || !(q->min < q->max) || !(q->value >= q->min && q->value <= q->max))
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, q->name,
                          "parameter '%s': range [%g, %g] with value %g (expected finite min < max, value within)",
                          q->name, q->min, q->max, q->value);
    for (int j = 0; j < i; ++j)
      if (strcmp(p[j].name, q->name) == 0)
        return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, q->name, "parameter '%s' declared twice", q->name);
  }
  pthread_mutex_lock(&c->lock);
  if (n > 0) memcpy(c->params, p, (size_t)n * sizeof *p);
  c->nparam = n;
  c->params_version++;
  pthread_mutex_unlock(&c->lock);
  return TL_OK;
}

/* ------------------------------------------------------------ the public API (talus/record.h) */

tl_status tl_recorder_rewind(tl_recorder *rec, tl_error *err) {
  if (!rec) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "rec", "rec must not be NULL");
  rec->next_time = tl_world_time(rec->world);
  return tl_recorder_capture(rec, err);
}

int tl_viewer_poll(tl_viewer *v, tl_viewer_event *ev) {
  tl_live_control *c = v && ev ? tl_viewer_control(v) : NULL;
  return c ? tl_ctl_pop(c, ev) : 0;
}

void tl_viewer_set_status(tl_viewer *v, const tl_viewer_status *st) {
  tl_live_control *c = v && st ? tl_viewer_control(v) : NULL;
  if (c) tl_ctl_set_status(c, st);
}

tl_status tl_viewer_set_params(tl_viewer *v, const tl_viewer_param *p, int n, tl_error *err) {
  if (!v) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "viewer", "viewer must not be NULL");
  tl_live_control *c = tl_viewer_control(v);
  if (!c) return tl_error_set(err, TL_ERR_UNSUPPORTED, NULL, 0, NULL, "this Talus has no live view");
  tl_status st = tl_ctl_set_params(c, p, n, err);
  if (st == TL_OK) tl_viewer_wake(v);
  return st;
}

long long tl_viewer_ndropped(const tl_viewer *v) {
  tl_live_control *c = v ? tl_viewer_control((tl_viewer *)v) : NULL;
  if (!c) return 0;
  pthread_mutex_lock(&c->lock);
  long long n = c->dropped;
  pthread_mutex_unlock(&c->lock);
  return n;
}
