/* World files: reading, the hardened libxml2 parse, element lines, errors and
 * attribute readers.
 *
 * Hardening (as the URDF parser, urdf/urdf_parse.c): the file is read whole
 * and parsed from memory with XML_PARSE_NONET, without XML_PARSE_NOENT (no
 * entity substitution), without XML_PARSE_HUGE (libxml2's limits on depth,
 * text size and entity amplification stay), with an entity resolver that
 * loads nothing; a document with a DOCTYPE is refused outright, so no entity
 * can be declared at all. Numbers are read with strtod in the C locale. */
#define _POSIX_C_SOURCE 200809L

#include "scene/scene_internal.h"

#include "base/error.h"
#include "base/file.h"
#include "base/xml.h"

#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/xmlerror.h>

/* ------------------------------------------------------------ errors */

/* "FILE:LINE: <ELEMENT>: TEXT", the parts that are empty / 0 left out. */
static tl_status fail_v(sc_parser *p, tl_status status, const char *file, int line,
                        const char *element, const char *fmt, va_list ap) {
  return tl_error_setv(p->err, status, file, line, element, fmt, ap);
}

tl_status sc_fail_at(sc_parser *p, tl_status status, const char *file, int line,
                     const char *element, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_status st = fail_v(p, status, file, line, element, fmt, ap);
  va_end(ap);
  return st;
}

tl_status sc_fail(sc_parser *p, tl_status status, const xmlNode *node, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_status st = fail_v(p, status, p->path, node ? sc_line(node) : 0,
                        node ? (const char *)node->name : NULL, fmt, ap);
  va_end(ap);
  return st;
}

int sc_line(const xmlNode *node) { return tl_xml_line(node); }

/* ------------------------------------------------------------ files */

tl_status sc_read_file(const char *path, char **out, size_t *len, tl_error *err) {
  return tl_read_file(path, SC_MAX_FILE_BYTES, out, len, err);
}

int tl_scene_is_world_file(const char *path) {
  char buf[65536], name[64];
  long got = tl_read_head(path, buf, sizeof buf); /* a FIFO or device is not waited on */
  if (got < 0) return -1;
  /* the root element decides (a DOCTYPE or a namespace does not hide it: the loader refuses those clearly) */
  return tl_xml_root_name(buf, (size_t)got, name, sizeof name) == 0 && strcmp(name, "talus_world") == 0;
}

/* ------------------------------------------------------------ XML */

/* Line of the first "<!DOCTYPE" in buf, 0 if none outside comments (approximate
 * scan, only to report a refused DOCTYPE where it is). */
static int doctype_line(const char *buf, size_t len) {
  int line = 1;
  for (size_t i = 0; i < len; i++) {
    if (buf[i] == '\n') line++;
    if (buf[i] == '<' && i + 9 <= len && memcmp(buf + i, "<!DOCTYPE", 9) == 0) return line;
  }
  return 0;
}

tl_status sc_parse_xml(sc_parser *p, const char *buf, size_t len, xmlDocPtr *out) {
  int line;
  char msg[400];
  if (tl_xml_parse(buf, len, out, &line, msg, sizeof(msg)))
    return sc_fail_at(p, TL_ERR_PARSE, p->path, line, NULL, "malformed XML: %s", msg);
  if ((*out)->intSubset || (*out)->extSubset) {
    xmlFreeDoc(*out);
    *out = NULL;
    return sc_fail_at(p, TL_ERR_PARSE, p->path, doctype_line(buf, len), NULL,
                      "a world file must not have a DOCTYPE (no entity declarations)");
  }
  return TL_OK;
}

/* ------------------------------------------------------------ attributes */

int sc_is(const xmlNode *node, const char *name) {
  return node && node->type == XML_ELEMENT_NODE && !node->ns &&
         xmlStrEqual(node->name, (const xmlChar *)name);
}

const char *sc_attr(const xmlNode *node, const char *name) {
  for (const xmlAttr *a = node->properties; a; a = a->next) {
    if (a->ns || !xmlStrEqual(a->name, (const xmlChar *)name)) continue;
    if (!a->children) return "";
    if (a->children->type == XML_TEXT_NODE && !a->children->next)
      return (const char *)a->children->content;
    return NULL; /* entity references: never without a DTD */
  }
  return NULL;
}

tl_status sc_check_attrs(sc_parser *p, const xmlNode *node, const char *const *allowed) {
  for (const xmlAttr *a = node->properties; a; a = a->next) {
    int ok = !a->ns;
    int k = 0;
    for (; ok && allowed[k]; k++)
      if (xmlStrEqual(a->name, (const xmlChar *)allowed[k])) break;
    if (ok && allowed[k]) continue;
    char list[512] = "";
    size_t n = 0;
    for (k = 0; allowed[k]; k++) tl_str_append(list, sizeof(list), &n, "%s%s", k ? ", " : "", allowed[k]);
    return sc_fail(p, TL_ERR_INVALID, node, "unknown attribute '%s%s%s' (known: %s)",
                   a->ns && a->ns->prefix ? (const char *)a->ns->prefix : "",
                   a->ns && a->ns->prefix ? ":" : "", (const char *)a->name, k ? list : "none");
  }
  return TL_OK;
}

tl_status sc_check_empty(sc_parser *p, const xmlNode *node) {
  for (const xmlNode *c = node->children; c; c = c->next) {
    if (c->type == XML_ELEMENT_NODE)
      return sc_fail(p, TL_ERR_INVALID, c, "unexpected element inside <%s> (line %d)",
                     (const char *)node->name, sc_line(node));
    if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
      for (const xmlChar *t = c->content; t && *t; t++)
        if (*t != ' ' && *t != '\t' && *t != '\r' && *t != '\n')
          return sc_fail(p, TL_ERR_INVALID, node, "unexpected text inside the element");
    }
  }
  return TL_OK;
}

tl_status sc_require(sc_parser *p, const xmlNode *node, const char *name, const char **out) {
  const char *v = sc_attr(node, name);
  if (!v) return sc_fail(p, TL_ERR_INVALID, node, "attribute '%s' is missing", name);
  if (!v[0]) return sc_fail(p, TL_ERR_INVALID, node, "attribute '%s' is empty", name);
  *out = v;
  return TL_OK;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* One number at *s (leading white space skipped); advances *s. 0 ok, -1 not
 * a number, -2 not finite. */
static int read_number(const char **s, double *out) {
  const char *c = *s;
  while (is_space(*c)) c++;
  if (!*c) return -1;
  char *end = NULL;
  errno = 0;
  double v = strtod(c, &end);
  if (end == c || (*end && !is_space(*end) && *end != ',')) return -1;
  /* strtod accepts "inf", "nan" and hex: only decimal numbers are numbers here */
  for (const char *t = c; t < end; t++)
    if (!((*t >= '0' && *t <= '9') || *t == '.' || *t == 'e' || *t == 'E' || *t == '+' ||
          *t == '-'))
      return -1;
  if (!isfinite(v)) return -2;
  *out = v;
  *s = end;
  return 0;
}

tl_status sc_number(sc_parser *p, const xmlNode *node, const char *name, int required, double def,
                    double *out) {
  const char *v = sc_attr(node, name);
  if (!v) {
    if (required) return sc_fail(p, TL_ERR_INVALID, node, "attribute '%s' is missing", name);
    *out = def;
    return TL_OK;
  }
  const char *c = v;
  double x = 0;
  int r = read_number(&c, &x);
  while (r == 0 && is_space(*c)) c++;
  if (r == -2)
    return sc_fail(p, TL_ERR_PARSE, node, "attribute %s=\"%s\": not a finite number", name, v);
  if (r != 0 || *c)
    return sc_fail(p, TL_ERR_PARSE, node, "attribute %s=\"%s\": expected one number", name, v);
  *out = x;
  return TL_OK;
}

tl_status sc_integer(sc_parser *p, const xmlNode *node, const char *name, int required, int def,
                     int lo, int hi, int *out) {
  const char *v = sc_attr(node, name);
  if (!v) {
    if (required) return sc_fail(p, TL_ERR_INVALID, node, "attribute '%s' is missing", name);
    *out = def;
    return TL_OK;
  }
  const char *c = v;
  while (is_space(*c)) c++;
  char *end = NULL;
  errno = 0;
  long x = strtol(c, &end, 10);
  const char *t = end;
  while (t && is_space(*t)) t++;
  if (end == c || *t || errno == ERANGE)
    return sc_fail(p, TL_ERR_PARSE, node, "attribute %s=\"%s\": expected an integer", name, v);
  if (x < lo || x > hi)
    return sc_fail(p, TL_ERR_INVALID, node, "attribute %s=\"%s\": must be in [%d, %d]", name, v, lo,
                   hi);
  *out = (int)x;
  return TL_OK;
}

tl_status sc_number_list(sc_parser *p, const xmlNode *node, const char *name, double **out,
                         int *n) {
  *out = NULL;
  *n = 0;
  const char *v = sc_attr(node, name);
  if (!v) return TL_OK;
  size_t cap = 1;
  for (const char *c = v; *c; c++) cap += is_space(*c);
  if (cap > (size_t)INT_MAX / 2)
    return sc_fail(p, TL_ERR_INVALID, node, "attribute '%s' is too long", name);
  double *a = malloc(cap * sizeof(double));
  if (!a) return sc_fail(p, TL_ERR_MEMORY, node, "out of memory");
  const char *c = v;
  int k = 0;
  for (;;) {
    while (is_space(*c)) c++;
    if (!*c) break;
    double x;
    int r = read_number(&c, &x);
    if (r != 0 || *c == ',') {
      free(a);
      return sc_fail(p, TL_ERR_PARSE, node, "attribute '%s': value %d is %s", name, k + 1,
                     r == -2 ? "not finite"
                             : "not a number (numbers are separated by white space)");
    }
    a[k++] = x;
  }
  *out = a;
  *n = k;
  return TL_OK;
}

tl_status sc_vector(sc_parser *p, const xmlNode *node, const char *name, int n, double *out,
                    int *given) {
  if (given) *given = 0;
  const char *v = sc_attr(node, name);
  if (!v) return TL_OK;
  double *a = NULL;
  int k = 0;
  tl_status st = sc_number_list(p, node, name, &a, &k);
  if (st != TL_OK) return st;
  if (k != n) {
    free(a);
    return sc_fail(p, TL_ERR_PARSE, node, "attribute %s=\"%s\": expected %d number%s, got %d", name,
                   v, n, n == 1 ? "" : "s", k);
  }
  memcpy(out, a, (size_t)n * sizeof(double));
  free(a);
  if (given) *given = 1;
  return TL_OK;
}

tl_status sc_boolean(sc_parser *p, const xmlNode *node, const char *name, int def, int *out) {
  const char *v = sc_attr(node, name);
  if (!v) {
    *out = def;
    return TL_OK;
  }
  if (!strcmp(v, "true") || !strcmp(v, "1"))
    *out = 1;
  else if (!strcmp(v, "false") || !strcmp(v, "0"))
    *out = 0;
  else
    return sc_fail(p, TL_ERR_PARSE, node, "attribute %s=\"%s\": expected true or false", name, v);
  return TL_OK;
}

tl_status sc_choice(sc_parser *p, const xmlNode *node, const char *name, const char *const *names,
                    int def, int *out) {
  const char *v = sc_attr(node, name);
  if (!v) {
    *out = def;
    return TL_OK;
  }
  char list[256] = "";
  size_t n = 0;
  for (int k = 0; names[k]; k++) {
    if (!strcmp(v, names[k])) {
      *out = k;
      return TL_OK;
    }
    tl_str_append(list, sizeof(list), &n, "%s%s", k ? ", " : "", names[k]);
  }
  return sc_fail(p, TL_ERR_INVALID, node, "attribute %s=\"%s\": expected one of %s", name, v, list);
}

static void quat_to_R(const double q[4], double R[9]) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = 1 - 2 * (y * y + z * z), R[1] = 2 * (x * y - w * z), R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z), R[4] = 1 - 2 * (x * x + z * z), R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y), R[7] = 2 * (y * z + w * x), R[8] = 1 - 2 * (x * x + y * y);
}

tl_status sc_orientation(sc_parser *p, const xmlNode *node, double quat[4], double R[9],
                         int *given) {
  double rpy[3] = {0, 0, 0}, q[4] = {1, 0, 0, 0};
  int has_rpy = 0, has_quat = 0;
  tl_status st;
  if ((st = sc_vector(p, node, "rpy", 3, rpy, &has_rpy)) != TL_OK) return st;
  if ((st = sc_vector(p, node, "quat", 4, q, &has_quat)) != TL_OK) return st;
  if (has_rpy && has_quat)
    return sc_fail(p, TL_ERR_INVALID, node, "give the orientation as rpy or as quat, not both");
  if (has_rpy) {
    /* URDF fixed axes: R = Rz(yaw) Ry(pitch) Rx(roll), q = qz qy qx */
    double cr = cos(rpy[0] / 2), sr = sin(rpy[0] / 2), cp = cos(rpy[1] / 2), sp = sin(rpy[1] / 2);
    double cy = cos(rpy[2] / 2), sy = sin(rpy[2] / 2);
    q[0] = cr * cp * cy + sr * sp * sy;
    q[1] = sr * cp * cy - cr * sp * sy;
    q[2] = cr * sp * cy + sr * cp * sy;
    q[3] = cr * cp * sy - sr * sp * cy;
  }
  double norm = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (!(norm > 1e-9))
    return sc_fail(p, TL_ERR_INVALID, node, "attribute quat=\"%s\": the quaternion is zero",
                   sc_attr(node, "quat"));
  for (int i = 0; i < 4; i++) quat[i] = q[i] / norm;
  quat_to_R(quat, R);
  if (given) *given = has_rpy || has_quat;
  return TL_OK;
}

tl_status sc_path(sc_parser *p, const xmlNode *node, const char *name, char **out) {
  *out = NULL;
  const char *v = NULL;
  tl_status st = sc_require(p, node, name, &v);
  if (st != TL_OK) return st;
  if (strstr(v, "://"))
    return sc_fail(p, TL_ERR_INVALID, node,
                   "attribute %s=\"%s\": URIs are not accepted, give a file path", name, v);
  const char *dir = v[0] == '/' ? "" : p->dir;
  size_t n = strlen(dir) + strlen(v) + 1;
  char *s = malloc(n);
  if (!s) return sc_fail(p, TL_ERR_MEMORY, node, "out of memory");
  snprintf(s, n, "%s%s", dir, v);
  *out = s;
  return TL_OK;
}

/* ------------------------------------------------------------ heightmap CSV */

tl_status sc_read_heights_csv(sc_parser *p, const char *path, double **out, int *n) {
  *out = NULL;
  *n = 0;
  char *buf = NULL;
  size_t len = 0;
  tl_status st = sc_read_file(path, &buf, &len, p->err);
  if (st != TL_OK) return st;
  size_t cap = 16;
  for (size_t i = 0; i < len; i++) cap += buf[i] == ',' || is_space(buf[i]);
  if (cap > (size_t)SC_MAX_HEIGHTMAP_POINTS + 16) cap = (size_t)SC_MAX_HEIGHTMAP_POINTS + 16;
  double *a = malloc(cap * sizeof(double));
  if (!a) {
    free(buf);
    return sc_fail_at(p, TL_ERR_MEMORY, path, 0, NULL, "out of memory");
  }
  int line = 1, k = 0;
  const char *c = buf;
  st = TL_OK;
  while (*c && st == TL_OK) {
    if (*c == '\n') {
      line++, c++;
    } else if (is_space(*c) || *c == ',') {
      c++;
    } else if (*c == '#') {
      while (*c && *c != '\n') c++;
    } else if ((size_t)k >= cap) {
      st = sc_fail_at(p, TL_ERR_INVALID, path, line, NULL, "more than %d heights",
                      SC_MAX_HEIGHTMAP_POINTS);
    } else {
      const char *start = c;
      int r = read_number(&c, &a[k]);
      if (r != 0) {
        int w = 0;
        while (start[w] && !is_space(start[w]) && start[w] != ',' && w < 40) w++;
        st = sc_fail_at(p, TL_ERR_PARSE, path, line, NULL, "height %d '%.*s' is %s", k + 1, w,
                        start, r == -2 ? "not finite" : "not a number");
      }
      k++;
    }
  }
  free(buf);
  if (st != TL_OK) {
    free(a);
    return st;
  }
  *out = a;
  *n = k;
  return TL_OK;
}
