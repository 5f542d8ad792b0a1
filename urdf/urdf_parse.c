/* URDF text -> tl_urdf_doc (urdf/urdf_doc.h), with libxml2.
 *
 * The parser runs in four stages; any failure frees everything and leaves the
 * caller's document zeroed.
 *
 *  1. Bytes. A file is read whole with fopen/fread; text is copied. The buffer
 *     is then made acceptable to libxml2 without changing any line number:
 *     trailing NUL bytes are dropped (some exporters write one after
 *     </robot>), and an XML declaration that follows comments or white space
 *     is moved to the front (libxml2 accepts it only as the very first thing),
 *     and a declared version other than 1.x is read as 1.0 with a warning.
 *     A UTF-8 byte order mark and CRLF line endings are handled by libxml2.
 *  2. XML. libxml2 parses from memory with no network access (XML_PARSE_NONET),
 *     no entity substitution (no XML_PARSE_NOENT), no DTD loading, an entity
 *     resolver that refuses every external entity, and its default limits on
 *     depth, text size and entity amplification (no XML_PARSE_HUGE). The
 *     first libxml2 error becomes TL_ERR_PARSE with its line.
 *  3. Elements. The <link> and <joint> children of <robot> are counted, the
 *     arrays allocated once, and every element read in file order. Numbers are
 *     decimal (strtod in the C locale), must consume the whole attribute and be
 *     finite; lists such as xyz have an exact length. Read: <link> (inertial,
 *     collision, visual, link-level <contact>), <joint> (origin, parent, child,
 *     axis, axis2, limit, dynamics, mimic, calibration, safety_controller; hinge2's
 *     suspension),
 *     robot-level <material>. Skipped, and listed in doc->skipped for verbose
 *     output: <transmission>, <gazebo> and unknown elements. Elements with a
 *     namespace prefix (xacro:..., ...) are extensions and skipped too.
 *  4. Structure. Link and joint names are checked for uniqueness and joints
 *     resolved to link indices through sorted name tables; then the link graph
 *     must be a single tree: every link has at most one parent joint, exactly
 *     one link has none (the root), and every link reaches the root.
 *
 * Inertia: the matrix must be positive semi-definite (negative principal
 * moments are an error). Real robots ship singular inertias on massive links
 * (ANYmal C's hatch, HyQ's feet, Talos's sensor frames) and inertias whose
 * principal moments break the triangle inequality A + B >= C (ANYmal C's
 * depth cameras): both load, with a warning in doc->warnings, and the
 * triangle case also sets link->triangle_violation. */
#define _POSIX_C_SOURCE 200809L

#include "urdf/urdf_doc.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include "base/error.h"
#include "base/file.h"
#include "base/xml.h"

#define TL_TRY(expr)                      \
  do {                                    \
    tl_status tl_try_ = (expr);           \
    if (tl_try_ != TL_OK) return tl_try_; \
  } while (0)

/* Relative tolerance of the inertia checks (PSD and triangle inequality). */
#define TL_INERTIA_TOL 1e-9
/* Longest attribute value quoted back in an error message. */
#define TL_QUOTE_MAX 60
/* Most link names listed when reporting several root links. */
#define TL_ROOTS_LISTED 6

/* Parent and child link names of a joint, kept until the structure stage. */
typedef struct tl_joint_ends {
  char parent[TL_URDF_NAME_MAX];
  char child[TL_URDF_NAME_MAX];
  char mimic[TL_URDF_NAME_MAX]; /* <mimic joint>, "" if none */
  int parent_line, child_line;
} tl_joint_ends;

/* Parser state: the document being filled, the error to fill, and the
 * context (" in link 'base'") that error messages append to element names. */
typedef struct tl_parser {
  tl_urdf_doc *doc;
  tl_error *err;
  int robot_line;
  tl_joint_ends *ends; /* [njoint] */
  char ctx[TL_URDF_NAME_MAX + 16];
  int in_visual;   /* reading a <visual>: a zero size is allowed (it draws nothing) */
  int zero_visual; /* set when such a zero size was read */
} tl_parser;

/* A name and the index of the link or joint it belongs to (sorted tables). */
typedef struct tl_name_ref {
  const char *name;
  int index;
} tl_name_ref;

/* ------------------------------------------------------------------------ */
/* errors and warnings                                                       */

#define tl_line tl_xml_line

/* Fill p->err with "FILE:LINE: <element>: text" (line and element from node)
 * and return status. */
static tl_status tl_fail(tl_parser *p, tl_status status, const xmlNode *node, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static tl_status tl_fail(tl_parser *p, tl_status status, const xmlNode *node, const char *fmt, ...) {
  char text[720];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  const char *element = node ? (const char *)node->name : NULL;
  return tl_error_set(p->err, status, p->doc->path, tl_line(node), element, "%s", text);
}

/* Same as tl_fail for an explicit line and element name. */
static tl_status tl_fail_at(tl_parser *p, tl_status status, int line, const char *element,
                            const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static tl_status tl_fail_at(tl_parser *p, tl_status status, int line, const char *element,
                            const char *fmt, ...) {
  char text[720];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  return tl_error_set(p->err, status, p->doc->path, line, element, "%s", text);
}

/* Record a warning: the first 16 are kept, all are counted. */
static void tl_warn(tl_urdf_doc *doc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tl_warn(tl_urdf_doc *doc, const char *fmt, ...) {
  int n = doc->nwarning++;
  int cap = (int)(sizeof(doc->warnings) / sizeof(doc->warnings[0]));
  if (n >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(doc->warnings[n], sizeof(doc->warnings[n]), fmt, ap);
  va_end(ap);
}

/* Record an element that is read past (for verbose output): the first 32
 * are kept, all are counted. */
static void tl_skip(tl_urdf_doc *doc, const xmlNode *node, const char *ctx) {
  int n = doc->nskipped++;
  int cap = (int)(sizeof(doc->skipped) / sizeof(doc->skipped[0]));
  if (n >= cap) return;
  char *name = (char *)xmlGetNoNsProp(node, (const xmlChar *)"name");
  char *ref = name ? NULL : (char *)xmlGetNoNsProp(node, (const xmlChar *)"reference");
  const char *prefix = node->ns && node->ns->prefix ? (const char *)node->ns->prefix : NULL;
  snprintf(doc->skipped[n], sizeof(doc->skipped[n]), "line %d: <%s%s%.40s>%s%.40s%s%s",
           tl_line(node), prefix ? prefix : "", prefix ? ":" : "", (const char *)node->name,
           name ? " '" : ref ? " reference '" : "", name ? name : ref ? ref : "",
           name || ref ? "'" : "", ctx);
  xmlFree(name);
  xmlFree(ref);
}

/* Copy s into dst (cap bytes) for quoting in a message, shortened with "...". */
static void tl_quote(char *dst, size_t cap, const char *s) {
  size_t n = strlen(s);
  if (n <= TL_QUOTE_MAX && n < cap)
    snprintf(dst, cap, "%s", s);
  else
    snprintf(dst, cap, "%.*s...", TL_QUOTE_MAX, s);
}

/* ------------------------------------------------------------------------ */
/* XML helpers                                                               */

/* 1 if node is the element `name` without a namespace prefix. */
static int tl_is(const xmlNode *node, const char *name) {
  if (node->type != XML_ELEMENT_NODE) return 0;
  if (node->ns && node->ns->prefix) return 0;
  return xmlStrEqual(node->name, (const xmlChar *)name);
}

/* 1 if elements a and b say the same thing: one name, the same attributes
 * with the same values (in any order) and the same child elements in order,
 * recursively (text and comments aside). */
static int tl_same_element(const xmlNode *a, const xmlNode *b) {
  if (!xmlStrEqual(a->name, b->name)) return 0;
  int na = 0, nb = 0;
  for (const xmlAttr *x = a->properties; x; x = x->next) {
    na++;
    xmlChar *va = xmlNodeGetContent((const xmlNode *)x), *vb = xmlGetNoNsProp(b, x->name);
    int same = va && vb && xmlStrEqual(va, vb);
    xmlFree(va);
    xmlFree(vb);
    if (!same) return 0;
  }
  for (const xmlAttr *x = b->properties; x; x = x->next) nb++;
  if (na != nb) return 0;
  const xmlNode *ca = a->children, *cb = b->children;
  for (;;) {
    while (ca && ca->type != XML_ELEMENT_NODE) ca = ca->next;
    while (cb && cb->type != XML_ELEMENT_NODE) cb = cb->next;
    if (!ca || !cb) return !ca && !cb;
    if (!tl_same_element(ca, cb)) return 0;
    ca = ca->next, cb = cb->next;
  }
}

/* Find the child element `name` of node: *out = NULL if there is none; a
 * second one is an error (which one to use would be a guess), unless it is
 * an exact copy of the first (Ghost Robotics' Spirit 40 in PyBullet's data
 * repeats <axis xyz="0 1 0"/> in its knee joints): read past with a warning. */
static tl_status tl_child(tl_parser *p, const xmlNode *node, const char *name,
                          const xmlNode **out) {
  *out = NULL;
  for (const xmlNode *c = node->children; c; c = c->next) {
    if (!tl_is(c, name)) continue;
    if (*out && tl_same_element(*out, c)) {
      tl_skip(p->doc, c, p->ctx);
      tl_warn(p->doc, "line %d: <%s>%s repeats the <%s> of line %d exactly: the copy is ignored", tl_line(c),
              name, p->ctx, name, tl_line(*out));
      continue;
    }
    if (*out)
      return tl_fail(p, TL_ERR_INVALID, c, "second <%s>%s (first at line %d): expected at most one "
                     "per <%s>", name, p->ctx, tl_line(*out), (const char *)node->name);
    *out = c;
  }
  return TL_OK;
}

/* Attribute `name` of node (no namespace) or NULL; release with xmlFree. */
static char *tl_attr(const xmlNode *node, const char *name) {
  return (char *)xmlGetNoNsProp(node, (const xmlChar *)name);
}

/* Copy string attribute `name` of node into dst. Absent: dst = "" and an
 * error if `required`. Empty or too long: error. `what` describes the value. */
static tl_status tl_get_string(tl_parser *p, const xmlNode *node, const char *name, char *dst,
                               size_t cap, int required, const char *what) {
  dst[0] = '\0';
  char *v = tl_attr(node, name);
  if (!v) {
    if (!required) return TL_OK;
    return tl_fail(p, TL_ERR_INVALID, node, "attribute '%s' of <%s>%s is missing: expected %s", name,
                   (const char *)node->name, p->ctx, what);
  }
  tl_status st = TL_OK;
  if (v[0] == '\0')
    st = tl_fail(p, TL_ERR_INVALID, node, "attribute '%s' of <%s>%s is empty: expected %s", name,
                 (const char *)node->name, p->ctx, what);
  else if (strlen(v) >= cap)
    st = tl_fail(p, TL_ERR_INVALID, node, "attribute '%s' of <%s>%s is longer than %zu characters",
                 name, (const char *)node->name, p->ctx, cap - 1);
  else
    memcpy(dst, v, strlen(v) + 1);
  xmlFree(v);
  return st;
}

/* ------------------------------------------------------------------------ */
/* numbers                                                                   */

static int tl_is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Parse white-space separated decimal numbers from s into out (at most n).
 * Returns the count, -1 for a token that is not a decimal number, -2 for a
 * non-finite one (nan, inf, overflow), or n + 1 when there are too many. */
static int tl_scan_numbers(const char *s, double *out, int n) {
  int k = 0;
  for (const char *c = s;;) {
    while (tl_is_space(*c)) c++;
    if (*c == '\0') return k;
    const char *tok = c;
    int decimal = 1;
    for (; *c && !tl_is_space(*c); c++)
      if (!strchr("0123456789+-.eE", *c)) decimal = 0;
    char *end = NULL;
    double v = strtod(tok, &end);
    if (end == c && !isfinite(v)) return -2;
    if (!decimal || end != c) return -1;
    if (!isfinite(v)) return -2;
    if (k == n) return n + 1;
    out[k++] = v;
  }
}

/* Read attribute `name` of node as exactly n numbers into out. An absent
 * attribute leaves out untouched, or is an error if `required`. */
static tl_status tl_get_numbers(tl_parser *p, const xmlNode *node, const char *name, double *out,
                                int n, int required) {
  char *v = tl_attr(node, name);
  if (!v) {
    if (!required) return TL_OK;
    return tl_fail(p, TL_ERR_INVALID, node, "attribute '%s' of <%s>%s is missing: expected %s", name,
                   (const char *)node->name, p->ctx, n == 1 ? "a number" : "a list of numbers");
  }
  double tmp[4];
  int got = tl_scan_numbers(v, tmp, n);
  tl_status st = TL_OK;
  if (got != n) {
    char q[TL_QUOTE_MAX + 8], want[48];
    tl_quote(q, sizeof(q), v);
    if (got == -2)
      snprintf(want, sizeof(want), "%s", n == 1 ? "a finite number" : "finite numbers");
    else if (n == 1)
      snprintf(want, sizeof(want), "a number");
    else
      snprintf(want, sizeof(want), "%d numbers separated by spaces", n);
    st = tl_fail(p, TL_ERR_PARSE, node, "attribute '%s' of <%s>%s is \"%s\": expected %s", name,
                 (const char *)node->name, p->ctx, q, want);
  } else {
    memcpy(out, tmp, (size_t)n * sizeof(double));
  }
  xmlFree(v);
  return st;
}

/* Error unless v > 0 (a size, in metres); in a <visual>, 0 is noted in
 * p->zero_visual instead (a marker that draws nothing). */
static tl_status tl_check_positive(tl_parser *p, const xmlNode *node, const char *name, double v) {
  if (v > 0) return TL_OK;
  if (v == 0 && p->in_visual) {
    p->zero_visual = 1;
    return TL_OK;
  }
  return tl_fail(p, TL_ERR_INVALID, node, "attribute '%s' of <%s>%s is %g: expected a size > 0 m",
                 name, (const char *)node->name, p->ctx, v);
}

/* Error unless v >= 0. */
static tl_status tl_check_nonneg(tl_parser *p, const xmlNode *node, const char *name, double v) {
  if (v >= 0) return TL_OK;
  return tl_fail(p, TL_ERR_INVALID, node, "attribute '%s' of <%s>%s is %g: expected a value >= 0",
                 name, (const char *)node->name, p->ctx, v);
}

/* ------------------------------------------------------------------------ */
/* inertia                                                                   */

static void tl_sort3(double v[3]) {
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2 - i; j++)
      if (v[j] > v[j + 1]) {
        double t = v[j];
        v[j] = v[j + 1];
        v[j + 1] = t;
      }
}

/* Eigenvalues (ascending) of the symmetric matrix [a b c; b d e; c e f]
 * given as I = {a b c d e f}. Closed form: O. K. Smith, "Eigenvalues of a
 * symmetric 3x3 matrix", Communications of the ACM 4(4):168, 1961. The matrix
 * is scaled by its largest entry first so that squares cannot overflow. */
static void tl_sym3_eigenvalues(const double I[6], double ev[3]) {
  double s = 0;
  for (int k = 0; k < 6; k++) s = fmax(s, fabs(I[k]));
  if (s == 0) {
    ev[0] = ev[1] = ev[2] = 0;
    return;
  }
  double a = I[0] / s, b = I[1] / s, c = I[2] / s, d = I[3] / s, e = I[4] / s, f = I[5] / s;
  double off = b * b + c * c + e * e;
  double q = (a + d + f) / 3;
  double p2 = (a - q) * (a - q) + (d - q) * (d - q) + (f - q) * (f - q) + 2 * off;
  double pp = sqrt(p2 / 6);
  if (off == 0 || pp == 0) {
    ev[0] = a, ev[1] = d, ev[2] = f;
  } else {
    double a2 = (a - q) / pp, d2 = (d - q) / pp, f2 = (f - q) / pp;
    double b2 = b / pp, c2 = c / pp, e2 = e / pp;
    double det = a2 * (d2 * f2 - e2 * e2) - b2 * (b2 * f2 - e2 * c2) + c2 * (b2 * e2 - d2 * c2);
    double r = fmin(1, fmax(-1, det / 2));
    double phi = acos(r) / 3;
    ev[2] = q + 2 * pp * cos(phi);
    ev[0] = q + 2 * pp * cos(phi + 2.0943951023931954923); /* + 2 pi / 3 */
    ev[1] = 3 * q - ev[0] - ev[2];
  }
  for (int k = 0; k < 3; k++) ev[k] *= s;
  tl_sort3(ev);
}

/* Check the inertia of link l (PSD) and record singular / triangle warnings. */
static tl_status tl_check_inertia(tl_parser *p, const xmlNode *node, tl_urdf_link *l) {
  double ev[3];
  tl_sym3_eigenvalues(l->inertia, ev);
  double tol = TL_INERTIA_TOL * fmax(fabs(ev[0]), fabs(ev[2]));
  if (ev[0] < -tol)
    return tl_fail(p, TL_ERR_INVALID, node,
                   "inertia of link '%s' is not positive definite (principal moments %g, %g, %g): "
                   "expected a symmetric positive (semi-)definite matrix about the COM",
                   l->name, ev[0], ev[1], ev[2]);
  for (int k = 0; k < 3; k++)
    if (fabs(ev[k]) <= tol) ev[k] = 0; /* round-off of the eigenvalue formula */
  int singular = l->mass > 0 && ev[0] == 0;
  l->triangle_violation = ev[2] > 0 && ev[0] + ev[1] < ev[2] * (1 - TL_INERTIA_TOL);
  if (singular)
    tl_warn(p->doc, "line %d: link '%s': inertia is singular (principal moments %g, %g, %g) although "
            "the mass is %g kg%s", tl_line(node), l->name, ev[0], ev[1], ev[2], l->mass,
            l->triangle_violation ? "; the moments break the triangle inequality A + B >= C" : "");
  else if (l->triangle_violation)
    tl_warn(p->doc, "line %d: link '%s': principal moments of inertia %g, %g, %g break the triangle "
            "inequality A + B >= C", tl_line(node), l->name, ev[0], ev[1], ev[2]);
  return TL_OK;
}

/* ------------------------------------------------------------------------ */
/* links                                                                     */

/* Read the optional <origin xyz rpy> child of node (zeros when absent). */
static tl_status tl_read_origin(tl_parser *p, const xmlNode *node, tl_urdf_pose *pose) {
  const xmlNode *o;
  memset(pose, 0, sizeof(*pose));
  TL_TRY(tl_child(p, node, "origin", &o));
  if (!o) return TL_OK;
  TL_TRY(tl_get_numbers(p, o, "xyz", pose->xyz, 3, 0));
  return tl_get_numbers(p, o, "rpy", pose->rpy, 3, 0);
}

/* <inertial>: <origin>, <mass value>, <inertia ixx ixy ixz iyy iyz izz>. */
static tl_status tl_read_inertial(tl_parser *p, const xmlNode *node, tl_urdf_link *l) {
  static const char *const names[6] = {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"};
  const xmlNode *mass, *inertia;
  l->has_inertial = 1;
  TL_TRY(tl_read_origin(p, node, &l->inertial_origin));
  TL_TRY(tl_child(p, node, "mass", &mass));
  TL_TRY(tl_child(p, node, "inertia", &inertia));
  if (!mass)
    return tl_fail(p, TL_ERR_INVALID, node, "<inertial>%s has no <mass>: expected <mass value=\"...\"/>",
                   p->ctx);
  if (!inertia)
    return tl_fail(p, TL_ERR_INVALID, node,
                   "<inertial>%s has no <inertia>: expected <inertia ixx ixy ixz iyy iyz izz/>", p->ctx);
  TL_TRY(tl_get_numbers(p, mass, "value", &l->mass, 1, 1));
  if (l->mass < 0)
    return tl_fail(p, TL_ERR_INVALID, mass, "mass of link '%s' is %g: expected a mass >= 0 kg",
                   l->name, l->mass);
  for (int k = 0; k < 6; k++) TL_TRY(tl_get_numbers(p, inertia, names[k], &l->inertia[k], 1, 1));
  return tl_check_inertia(p, inertia, l);
}

/* <capsule radius length|height> (RaiSim writes either name). */
static tl_status tl_read_capsule(tl_parser *p, const xmlNode *s, tl_urdf_geom *g) {
  double length = NAN, height = NAN;
  TL_TRY(tl_get_numbers(p, s, "radius", &g->size[0], 1, 1));
  TL_TRY(tl_get_numbers(p, s, "length", &length, 1, 0));
  TL_TRY(tl_get_numbers(p, s, "height", &height, 1, 0));
  if (isnan(length) && isnan(height))
    return tl_fail(p, TL_ERR_INVALID, s, "<capsule>%s has no 'length' (or 'height') attribute: "
                   "expected the length of the cylinder between the caps", p->ctx);
  if (!isnan(length) && !isnan(height) && length != height)
    return tl_fail(p, TL_ERR_INVALID, s, "<capsule>%s has length %g and height %g: expected one of them",
                   p->ctx, length, height);
  g->size[1] = isnan(length) ? height : length;
  TL_TRY(tl_check_positive(p, s, "radius", g->size[0]));
  return tl_check_positive(p, s, isnan(length) ? "height" : "length", g->size[1]);
}

/* <mesh filename scale>: scale defaults to 1 1 1; negative factors mirror. */
static tl_status tl_read_mesh(tl_parser *p, const xmlNode *s, tl_urdf_geom *g) {
  TL_TRY(tl_get_string(p, s, "filename", g->mesh_uri, sizeof(g->mesh_uri), 1, "the mesh file URI"));
  g->size[0] = g->size[1] = g->size[2] = 1;
  TL_TRY(tl_get_numbers(p, s, "scale", g->size, 3, 0));
  if (g->size[0] == 0 || g->size[1] == 0 || g->size[2] == 0)
    return tl_fail(p, TL_ERR_INVALID, s, "attribute 'scale' of <mesh>%s is %g %g %g: expected "
                   "non-zero scale factors", p->ctx, g->size[0], g->size[1], g->size[2]);
  return TL_OK;
}

/* One shape element inside <geometry> into g. */
static tl_status tl_read_shape(tl_parser *p, const xmlNode *s, tl_urdf_geom *g) {
  g->shape_line = tl_line(s);
  if (tl_is(s, "box")) {
    g->type = TL_GEOM_BOX;
    TL_TRY(tl_get_numbers(p, s, "size", g->size, 3, 1));
    if (g->size[0] == 0 && g->size[1] == 0 && g->size[2] == 0 && !p->in_visual) {
      /* a box of size 0 0 0 is a point (MATLAB's Kinova descriptions give their root one) */
      g->type = TL_GEOM_SPHERE;
      tl_warn(p->doc, "line %d: <box size=\"0 0 0\">%s read as a point contact (a sphere of radius 0)",
              tl_line(s), p->ctx);
      return TL_OK;
    }
    for (int k = 0; k < 3; k++) {
      if (g->size[k] > 0) continue;
      if (g->size[k] == 0 && p->in_visual) { /* a visual that draws nothing: tl_read_visual */
        p->zero_visual = 1;
        continue;
      }
      return tl_fail(p, TL_ERR_INVALID, s, "attribute 'size' of <box>%s is %g %g %g: expected "
                     "three edge lengths > 0 m", p->ctx, g->size[0], g->size[1], g->size[2]);
    }
    return TL_OK;
  }
  if (tl_is(s, "sphere")) {
    g->type = TL_GEOM_SPHERE;
    TL_TRY(tl_get_numbers(p, s, "radius", &g->size[0], 1, 1));
    /* a collision sphere of radius 0 is a point contact (Drake's idiom: the foot corners of its
     * and MATLAB's Atlas and Valkyrie); every narrow-phase test takes r = 0 */
    if (g->size[0] == 0 && !p->in_visual) return TL_OK;
    return tl_check_positive(p, s, "radius", g->size[0]);
  }
  if (tl_is(s, "cylinder")) {
    g->type = TL_GEOM_CYLINDER;
    TL_TRY(tl_get_numbers(p, s, "radius", &g->size[0], 1, 1));
    TL_TRY(tl_get_numbers(p, s, "length", &g->size[1], 1, 1));
    TL_TRY(tl_check_positive(p, s, "radius", g->size[0]));
    return tl_check_positive(p, s, "length", g->size[1]);
  }
  if (tl_is(s, "capsule")) {
    g->type = TL_GEOM_CAPSULE;
    return tl_read_capsule(p, s, g);
  }
  g->type = TL_GEOM_MESH;
  return tl_read_mesh(p, s, g);
}

/* 1 if node is one of the shapes <geometry> may hold. */
static int tl_is_shape(const xmlNode *node) {
  return tl_is(node, "box") || tl_is(node, "sphere") || tl_is(node, "cylinder") ||
         tl_is(node, "capsule") || tl_is(node, "mesh");
}

/* <geometry> with exactly one shape. Another element beside that shape (a
 * <material> written inside <geometry>, as in Bullet's racecar.urdf) is read
 * past with a warning, as urdfdom reads the first child and ignores the rest;
 * an unknown element with no shape beside it is an error (a misspelt shape). */
static tl_status tl_read_geometry(tl_parser *p, const xmlNode *node, tl_urdf_geom *g) {
  const xmlNode *shape = NULL, *any_shape = NULL;
  for (const xmlNode *c = node->children; c && !any_shape; c = c->next)
    if (c->type == XML_ELEMENT_NODE && !(c->ns && c->ns->prefix) && tl_is_shape(c)) any_shape = c;
  for (const xmlNode *c = node->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE || (c->ns && c->ns->prefix)) continue;
    if (!tl_is_shape(c) && any_shape) {
      tl_skip(p->doc, c, p->ctx);
      tl_warn(p->doc, "line %d: <%.40s> in <geometry>%s ignored: a <geometry> holds one shape (<%s> at "
              "line %d)", tl_line(c), (const char *)c->name, p->ctx, (const char *)any_shape->name,
              tl_line(any_shape));
      continue;
    }
    if (!tl_is_shape(c))
      return tl_fail(p, TL_ERR_INVALID, c, "unknown shape <%s> in <geometry>%s: expected <box>, "
                     "<sphere>, <cylinder>, <capsule> or <mesh>", (const char *)c->name, p->ctx);
    if (shape)
      return tl_fail(p, TL_ERR_INVALID, c, "second shape <%s> in <geometry>%s (first <%s> at line %d): "
                     "expected exactly one shape", (const char *)c->name, p->ctx,
                     (const char *)shape->name, tl_line(shape));
    shape = c;
  }
  if (!shape)
    return tl_fail(p, TL_ERR_INVALID, node, "<geometry>%s is empty: expected one of <box>, <sphere>, "
                   "<cylinder>, <capsule> or <mesh>", p->ctx);
  return tl_read_shape(p, shape, g);
}

/* <collision name> or <visual name>: <origin>, <geometry>. */
static tl_status tl_read_collision(tl_parser *p, const xmlNode *node, tl_urdf_geom *g) {
  const xmlNode *geometry;
  g->line = tl_line(node);
  TL_TRY(tl_get_string(p, node, "name", g->name, sizeof(g->name), 0, "a name"));
  TL_TRY(tl_read_origin(p, node, &g->origin));
  TL_TRY(tl_child(p, node, "geometry", &geometry));
  if (!geometry)
    return tl_fail(p, TL_ERR_INVALID, node, "<%s>%s has no <geometry>: expected one",
                   (const char *)node->name, p->ctx);
  return tl_read_geometry(p, geometry, g);
}

/* <material name><color rgba/><texture filename/></material>. The name is
 * required at robot level (`named`), optional inside a <visual>. */
static tl_status tl_read_material(tl_parser *p, const xmlNode *node, tl_urdf_material *m, int named) {
  const xmlNode *color, *texture;
  m->line = tl_line(node);
  char *name = tl_attr(node, "name");
  int empty_inline = !named && name && name[0] == '\0'; /* name="" inside a <visual> (xacro output) */
  xmlFree(name);
  if (!empty_inline)
    TL_TRY(tl_get_string(p, node, "name", m->name, sizeof(m->name), named, "a material name"));
  TL_TRY(tl_child(p, node, "color", &color));
  TL_TRY(tl_child(p, node, "texture", &texture));
  if (color) {
    TL_TRY(tl_get_numbers(p, color, "rgba", m->rgba, 4, 1));
    for (int k = 0; k < 4; k++)
      if (!(m->rgba[k] >= 0 && m->rgba[k] <= 1))
        return tl_fail(p, TL_ERR_INVALID, color, "attribute 'rgba' of <color>%s is %g %g %g %g: "
                       "expected four values in [0, 1]", p->ctx, m->rgba[0], m->rgba[1], m->rgba[2],
                       m->rgba[3]);
    m->has_color = 1;
  }
  if (texture)
    TL_TRY(tl_get_string(p, texture, "filename", m->texture, sizeof(m->texture), 1,
                         "the texture file name"));
  return TL_OK;
}

/* <visual name>: <origin>, <geometry>, <material>. A <visual> with several
 * <material> children (COLLADA exporters write one per sub-material, as in
 * Unitree's Go2, B2 and H1 descriptions) takes the first, as urdfdom does,
 * and reads past the others with a warning: appearance only, no guess about
 * the physics. A primitive of size 0 (PyBullet's Laikago marks its toes with
 * <sphere radius="0.0"/> visuals) draws nothing: *keep = 0 and a warning
 * (in a <collision> it stays an error, but for a sphere of radius 0: a point
 * contact, tl_read_shape). */
static tl_status tl_read_visual(tl_parser *p, const xmlNode *node, tl_urdf_visual *v, int *keep) {
  const xmlNode *material = NULL;
  p->in_visual = 1, p->zero_visual = 0;
  tl_status st = tl_read_collision(p, node, &v->geom);
  p->in_visual = 0;
  TL_TRY(st);
  *keep = !p->zero_visual;
  if (!*keep) {
    tl_warn(p->doc, "line %d: <visual>%s has a <%s> of size 0: ignored (it draws nothing)", tl_line(node),
            p->ctx, tl_geom_type_name(v->geom.type));
    memset(v, 0, sizeof(*v));
    return TL_OK;
  }
  int extra = 0;
  for (const xmlNode *c = node->children; c; c = c->next) {
    if (!tl_is(c, "material")) continue;
    if (!material) {
      material = c;
    } else {
      tl_skip(p->doc, c, p->ctx);
      extra++;
    }
  }
  if (extra)
    tl_warn(p->doc, "line %d: <visual>%s has %d <material> elements: the first (line %d) is used, the "
            "others ignored", tl_line(node), p->ctx, extra + 1, tl_line(material));
  if (!material) return TL_OK;
  v->has_material = 1;
  return tl_read_material(p, material, &v->material, 0);
}

/* Link-level <contact> (PyBullet's URDF extension, RaiSim reads it too):
 * <lateral_friction value/>, <restitution value/>, <stiffness value/>,
 * <damping value/>; every value >= 0. Other children (rolling_friction,
 * spinning_friction, ...) are listed as skipped. */
static tl_status tl_read_contact(tl_parser *p, const xmlNode *node, tl_urdf_link *l) {
  static const char *const names[4] = {"lateral_friction", "restitution", "stiffness", "damping"};
  double *dst[4] = {&l->contact_friction, &l->contact_restitution, &l->contact_stiffness,
                    &l->contact_damping};
  l->contact_line = tl_line(node);
  for (int k = 0; k < 4; k++) {
    const xmlNode *e;
    TL_TRY(tl_child(p, node, names[k], &e));
    if (!e) continue;
    TL_TRY(tl_get_numbers(p, e, "value", dst[k], 1, 1));
    TL_TRY(tl_check_nonneg(p, e, "value", *dst[k]));
  }
  for (const xmlNode *c = node->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    int known = 0;
    for (int k = 0; k < 4 && !known; k++) known = tl_is(c, names[k]);
    if (!known) tl_skip(p->doc, c, p->ctx);
  }
  return TL_OK;
}

/* Count the children of node named `name` and allocate n elements of `size`
 * bytes for them (*out stays NULL when there are none). */
static tl_status tl_alloc_children(tl_parser *p, const xmlNode *node, const char *name, size_t size,
                                   int *n, void **out) {
  *n = 0;
  for (const xmlNode *c = node->children; c; c = c->next)
    if (tl_is(c, name)) (*n)++;
  if (*n == 0) return TL_OK;
  *out = calloc((size_t)*n, size);
  if (!*out) return tl_fail(p, TL_ERR_MEMORY, node, "out of memory for %d <%s> elements", *n, name);
  return TL_OK;
}

/* <link name>: <inertial>, <collision>, <visual> and <contact> children
 * (the rest is skipped). */
static tl_status tl_read_link(tl_parser *p, const xmlNode *node, tl_urdf_link *l) {
  l->line = tl_line(node);
  l->contact_friction = l->contact_restitution = l->contact_stiffness = l->contact_damping = NAN;
  p->ctx[0] = '\0';
  TL_TRY(tl_get_string(p, node, "name", l->name, sizeof(l->name), 1, "a unique link name"));
  snprintf(p->ctx, sizeof(p->ctx), " in link '%s'", l->name);
  const xmlNode *inertial, *contact;
  TL_TRY(tl_child(p, node, "inertial", &inertial));
  if (inertial) TL_TRY(tl_read_inertial(p, inertial, l));
  TL_TRY(tl_child(p, node, "contact", &contact));
  if (contact) TL_TRY(tl_read_contact(p, contact, l));
  TL_TRY(tl_alloc_children(p, node, "collision", sizeof(*l->geoms), &l->ngeom, (void **)&l->geoms));
  TL_TRY(tl_alloc_children(p, node, "visual", sizeof(*l->visuals), &l->nvisual, (void **)&l->visuals));
  int k = 0, v = 0;
  for (const xmlNode *c = node->children; c; c = c->next) {
    if (tl_is(c, "collision"))
      TL_TRY(tl_read_collision(p, c, &l->geoms[k++]));
    else if (tl_is(c, "visual")) {
      int keep;
      TL_TRY(tl_read_visual(p, c, &l->visuals[v], &keep));
      v += keep;
    }
    else if (c->type == XML_ELEMENT_NODE && !tl_is(c, "inertial") && !tl_is(c, "contact"))
      tl_skip(p->doc, c, p->ctx);
  }
  l->nvisual = v;
  return TL_OK;
}

/* ------------------------------------------------------------------------ */
/* joints                                                                    */

/* URDF joint type names. */
static const struct {
  const char *name;
  tl_joint_type type;
  int continuous, hinge2;
} tl_joint_types[] = {
    {"revolute", TL_JOINT_REVOLUTE, 0, 0},   {"continuous", TL_JOINT_REVOLUTE, 1, 0},
    {"prismatic", TL_JOINT_PRISMATIC, 0, 0}, {"fixed", TL_JOINT_FIXED, 0, 0},
    {"floating", TL_JOINT_FLOATING, 0, 0},   {"spherical", TL_JOINT_SPHERICAL, 0, 0},
    {"ball", TL_JOINT_SPHERICAL, 0, 0},      {"universal", TL_JOINT_UNIVERSAL, 0, 0},
    {"planar", TL_JOINT_PLANAR, 0, 0},       {"hinge2", TL_JOINT_REVOLUTE, 0, 1},
};

/* The type attribute of <joint>. */
static tl_status tl_read_joint_type(tl_parser *p, const xmlNode *node, tl_urdf_joint *j) {
  static const char *const expected =
      "revolute, continuous, prismatic, fixed, floating, planar, spherical, ball, universal or hinge2";
  char type[32];
  TL_TRY(tl_get_string(p, node, "type", type, sizeof(type), 1, expected));
  for (size_t k = 0; k < sizeof(tl_joint_types) / sizeof(tl_joint_types[0]); k++) {
    if (strcmp(type, tl_joint_types[k].name) != 0) continue;
    j->type = tl_joint_types[k].type;
    j->continuous = tl_joint_types[k].continuous;
    j->hinge2 = tl_joint_types[k].hinge2;
    return TL_OK;
  }
  return tl_fail(p, TL_ERR_INVALID, node, "joint '%s' has unknown type \"%s\": expected %s", j->name,
                 type, expected);
}

/* <parent link> or <child link> (`which`) of joint `joint` into name / line. */
static tl_status tl_read_end(tl_parser *p, const xmlNode *node, const char *joint, const char *which,
                             char *name, int *line) {
  const xmlNode *e;
  TL_TRY(tl_child(p, node, which, &e));
  if (!e)
    return tl_fail(p, TL_ERR_INVALID, node, "joint '%s' has no <%s>: expected <%s link=\"...\"/>",
                   joint, which, which);
  *line = tl_line(e);
  return tl_get_string(p, e, "link", name, TL_URDF_NAME_MAX, 1, "the name of a link");
}

/* 1 if joints of this type turn or slide about their axis. */
static int tl_uses_axis(tl_joint_type type) {
  return type == TL_JOINT_REVOLUTE || type == TL_JOINT_PRISMATIC || type == TL_JOINT_UNIVERSAL ||
         type == TL_JOINT_PLANAR;
}

/* Axis element `which` (<axis> or <axis2>) into a (unit length). An absent
 * element or attribute keeps a. A zero axis is an error when `needed`, and
 * otherwise (fixed, floating, spherical joints, which have no axis) leaves a. */
static tl_status tl_read_axis(tl_parser *p, const xmlNode *node, const char *which, double a[3],
                              int needed) {
  const xmlNode *e;
  double v[3] = {a[0], a[1], a[2]};
  TL_TRY(tl_child(p, node, which, &e));
  if (!e) return TL_OK;
  TL_TRY(tl_get_numbers(p, e, "xyz", v, 3, 0));
  double m = fmax(fabs(v[0]), fmax(fabs(v[1]), fabs(v[2])));
  if (m == 0) {
    if (!needed) return TL_OK;
    return tl_fail(p, TL_ERR_INVALID, e, "attribute 'xyz' of <%s>%s is 0 0 0: expected a non-zero "
                   "direction", which, p->ctx);
  }
  double n = sqrt((v[0] / m) * (v[0] / m) + (v[1] / m) * (v[1] / m) + (v[2] / m) * (v[2] / m)) * m;
  for (int k = 0; k < 3; k++) a[k] = v[k] / n;
  return TL_OK;
}

/* Both axes of a universal or hinge2 joint; axis2 is required and not
 * parallel to axis. */
static tl_status tl_read_axes(tl_parser *p, const xmlNode *node, tl_urdf_joint *j) {
  j->axis[0] = 1;
  TL_TRY(tl_read_axis(p, node, "axis", j->axis, tl_uses_axis(j->type)));
  if (j->type != TL_JOINT_UNIVERSAL && !j->hinge2) return TL_OK;
  const char *kind = j->hinge2 ? "hinge2" : "universal";
  const xmlNode *e;
  TL_TRY(tl_child(p, node, "axis2", &e));
  if (!e)
    return tl_fail(p, TL_ERR_INVALID, node, "%s joint '%s' has no <axis2>: expected "
                   "<axis2 xyz=\"...\"/>%s", kind, j->name,
                   j->hinge2 ? " (the wheel axis, in the child frame at zero steering)" : "");
  j->axis2[1] = 1;
  TL_TRY(tl_read_axis(p, node, "axis2", j->axis2, 1));
  const double *a = j->axis, *b = j->axis2;
  double c[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
  if (sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]) < 1e-6)
    return tl_fail(p, TL_ERR_INVALID, e, "<axis2> of %s joint '%s' is parallel to <axis>: "
                   "expected two different directions", kind, j->name);
  return TL_OK;
}

/* <suspension stiffness damping> of a hinge2 joint (a spring-damper along
 * its axis, N/m and N s/m, both >= 0; stiffness required). Absent: rigid. */
static tl_status tl_read_suspension(tl_parser *p, const xmlNode *node, tl_urdf_joint *j) {
  const xmlNode *e;
  if (!j->hinge2) return TL_OK;
  TL_TRY(tl_child(p, node, "suspension", &e));
  if (!e) return TL_OK;
  j->suspension_line = tl_line(e);
  TL_TRY(tl_get_numbers(p, e, "stiffness", &j->suspension_stiffness, 1, 1));
  TL_TRY(tl_get_numbers(p, e, "damping", &j->suspension_damping, 1, 0));
  TL_TRY(tl_check_nonneg(p, e, "stiffness", j->suspension_stiffness));
  return tl_check_nonneg(p, e, "damping", j->suspension_damping);
}

/* <limit lower upper effort velocity>, every attribute optional. */
static tl_status tl_read_limit(tl_parser *p, const xmlNode *node, tl_urdf_joint *j) {
  const xmlNode *e;
  j->lower = -INFINITY, j->upper = INFINITY, j->effort = INFINITY, j->velocity = INFINITY;
  TL_TRY(tl_child(p, node, "limit", &e));
  if (!e) return TL_OK;
  j->has_limit = 1;
  double lower = -INFINITY, upper = INFINITY;
  TL_TRY(tl_get_numbers(p, e, "lower", &lower, 1, 0));
  TL_TRY(tl_get_numbers(p, e, "upper", &upper, 1, 0));
  TL_TRY(tl_get_numbers(p, e, "effort", &j->effort, 1, 0));
  TL_TRY(tl_get_numbers(p, e, "velocity", &j->velocity, 1, 0));
  /* Gazebo (SDF <limit>) enforces no negative effort or velocity limit, and
   * URDFs written for it say "unlimited" with -1 (Halodi's Eve): so taken. */
  if (j->effort < 0 || j->velocity < 0) {
    char eff[48] = "", vel[48] = "";
    if (j->effort < 0) snprintf(eff, sizeof(eff), " effort %.6g", j->effort);
    if (j->velocity < 0) snprintf(vel, sizeof(vel), " velocity %.6g", j->velocity);
    tl_warn(p->doc, "line %d: joint '%s': <limit>%s%s taken as unlimited (a negative limit is not "
            "enforced, as in Gazebo)", tl_line(e), j->name, eff, vel);
    if (j->effort < 0) j->effort = INFINITY;
    if (j->velocity < 0) j->velocity = INFINITY;
  }
  TL_TRY(tl_check_nonneg(p, e, "effort", j->effort));
  TL_TRY(tl_check_nonneg(p, e, "velocity", j->velocity));
  if (j->continuous) return TL_OK; /* a continuous joint has no position limits */
  if (lower > upper)
    return tl_fail(p, TL_ERR_INVALID, e, "lower limit %g of joint '%s' is above its upper limit %g: "
                   "expected lower <= upper", lower, j->name, upper);
  j->lower = lower, j->upper = upper;
  return TL_OK;
}

/* spring_mount: the rest position in the joint's own coordinates: one
 * number, two for a universal joint, a non-zero quaternion (normalised) for
 * a spherical one. */
static tl_status tl_read_spring_mount(tl_parser *p, const xmlNode *e, tl_urdf_joint *j) {
  int n = j->type == TL_JOINT_SPHERICAL ? 4 : j->type == TL_JOINT_PLANAR ? 3 : j->type == TL_JOINT_UNIVERSAL ? 2 : 1;
  memset(j->spring_mount, 0, sizeof(j->spring_mount));
  if (j->type == TL_JOINT_SPHERICAL) j->spring_mount[0] = 1.0;
  TL_TRY(tl_get_numbers(p, e, "spring_mount", j->spring_mount, n, 0));
  if (n == 4) {
    double *qm = j->spring_mount, norm = sqrt(qm[0] * qm[0] + qm[1] * qm[1] + qm[2] * qm[2] + qm[3] * qm[3]);
    if (!(norm > 1e-12))
      return tl_fail(p, TL_ERR_INVALID, e, "spring_mount of spherical joint '%s' is a zero quaternion: "
                     "expected w x y z of its rest orientation", j->name);
    for (int i = 0; i < 4; i++) qm[i] /= norm;
  }
  return TL_OK;
}

/* <dynamics damping friction rotor_inertia spring_mount stiffness>. */
static tl_status tl_read_dynamics(tl_parser *p, const xmlNode *node, tl_urdf_joint *j) {
  const xmlNode *e;
  TL_TRY(tl_child(p, node, "dynamics", &e));
  if (!e) return TL_OK;
  TL_TRY(tl_get_numbers(p, e, "damping", &j->damping, 1, 0));
  TL_TRY(tl_get_numbers(p, e, "friction", &j->friction, 1, 0));
  TL_TRY(tl_get_numbers(p, e, "rotor_inertia", &j->rotor_inertia, 1, 0));
  TL_TRY(tl_read_spring_mount(p, e, j));
  TL_TRY(tl_get_numbers(p, e, "stiffness", &j->stiffness, 1, 0));
  TL_TRY(tl_check_nonneg(p, e, "damping", j->damping));
  TL_TRY(tl_check_nonneg(p, e, "friction", j->friction));
  TL_TRY(tl_check_nonneg(p, e, "rotor_inertia", j->rotor_inertia));
  return tl_check_nonneg(p, e, "stiffness", j->stiffness);
}

/* <mimic joint multiplier offset>: the joint name goes to `name`, resolved
 * in the structure stage. */
static tl_status tl_read_mimic(tl_parser *p, const xmlNode *node, tl_urdf_joint *j, char *name) {
  const xmlNode *e;
  j->mimic_joint = -1;
  j->mimic_mult = 1;
  j->mimic_offset = 0;
  TL_TRY(tl_child(p, node, "mimic", &e));
  if (!e) return TL_OK;
  j->mimic_line = tl_line(e);
  TL_TRY(tl_get_string(p, e, "joint", name, TL_URDF_NAME_MAX, 1, "the name of the joint to follow"));
  TL_TRY(tl_get_numbers(p, e, "multiplier", &j->mimic_mult, 1, 0));
  return tl_get_numbers(p, e, "offset", &j->mimic_offset, 1, 0);
}

/* <calibration rising falling> and <safety_controller soft_lower_limit
 * soft_upper_limit k_position k_velocity> (URDF specification: k_velocity
 * required, the others default to 0; gains >= 0). */
static tl_status tl_read_calibration(tl_parser *p, const xmlNode *node, tl_urdf_joint *j) {
  static const char *const names[4] = {"soft_lower_limit", "soft_upper_limit", "k_position",
                                       "k_velocity"};
  const xmlNode *e;
  j->calibration[0] = j->calibration[1] = NAN;
  TL_TRY(tl_child(p, node, "calibration", &e));
  if (e) {
    TL_TRY(tl_get_numbers(p, e, "rising", &j->calibration[0], 1, 0));
    TL_TRY(tl_get_numbers(p, e, "falling", &j->calibration[1], 1, 0));
  }
  TL_TRY(tl_child(p, node, "safety_controller", &e));
  if (!e) return TL_OK;
  j->has_safety = 1;
  for (int k = 0; k < 4; k++) TL_TRY(tl_get_numbers(p, e, names[k], &j->safety[k], 1, k == 3));
  TL_TRY(tl_check_nonneg(p, e, names[2], j->safety[2]));
  TL_TRY(tl_check_nonneg(p, e, names[3], j->safety[3]));
  if (j->safety[0] > j->safety[1])
    return tl_fail(p, TL_ERR_INVALID, e, "soft_lower_limit %g of joint '%s' is above its "
                   "soft_upper_limit %g: expected lower <= upper", j->safety[0], j->name, j->safety[1]);
  return TL_OK;
}

/* 1 if node is a child element of <joint> that the parser reads
 * (<suspension> on hinge2 joints only). */
static int tl_is_joint_part(const xmlNode *c, const tl_urdf_joint *j) {
  static const char *const parts[] = {"parent", "child", "origin", "axis", "axis2", "limit",
                                      "dynamics", "mimic", "calibration", "safety_controller"};
  for (size_t k = 0; k < sizeof(parts) / sizeof(parts[0]); k++)
    if (tl_is(c, parts[k])) return 1;
  return j->hinge2 && tl_is(c, "suspension");
}

/* <joint name type>: <parent>, <child>, <origin>, <axis>, <axis2>, <limit>,
 * <dynamics>, <mimic>, <calibration>, <safety_controller> (the rest is
 * skipped). Link and mimic names go to p->ends[index]. */
static tl_status tl_read_joint(tl_parser *p, const xmlNode *node, tl_urdf_joint *j, int index) {
  tl_joint_ends *ends = &p->ends[index];
  j->line = tl_line(node);
  p->ctx[0] = '\0';
  TL_TRY(tl_get_string(p, node, "name", j->name, sizeof(j->name), 1, "a unique joint name"));
  snprintf(p->ctx, sizeof(p->ctx), " in joint '%s'", j->name);
  TL_TRY(tl_read_joint_type(p, node, j));
  TL_TRY(tl_read_end(p, node, j->name, "parent", ends->parent, &ends->parent_line));
  TL_TRY(tl_read_end(p, node, j->name, "child", ends->child, &ends->child_line));
  TL_TRY(tl_read_origin(p, node, &j->origin));
  TL_TRY(tl_read_axes(p, node, j));
  TL_TRY(tl_read_limit(p, node, j));
  TL_TRY(tl_read_dynamics(p, node, j));
  TL_TRY(tl_read_suspension(p, node, j));
  TL_TRY(tl_read_mimic(p, node, j, ends->mimic));
  if (j->hinge2 && j->mimic_line)
    return tl_fail_at(p, TL_ERR_UNSUPPORTED, j->mimic_line, "mimic", "joint '%s' is hinge2: <mimic> is "
                      "supported on revolute, continuous and prismatic joints only", j->name);
  TL_TRY(tl_read_calibration(p, node, j));
  for (const xmlNode *c = node->children; c; c = c->next)
    if (c->type == XML_ELEMENT_NODE && !tl_is_joint_part(c, j)) tl_skip(p->doc, c, p->ctx);
  return TL_OK;
}

static tl_name_ref *tl_sorted_names(const char *base, size_t stride, int n, int *dup_a, int *dup_b);

/* ------------------------------------------------------------------------ */
/* loop joints: <loop_joint name type><link1 link xyz rpy/><link2 .../>     */
/* <axis xyz/></loop_joint>, a Talus extension read beside <link> and       */
/* <joint> (stage 3); its links are resolved with the joints' (stage 4)     */

/* <link1 link xyz rpy/> or <link2 ...> of a <loop_joint>: required. */
static tl_status tl_read_loop_end(tl_parser *p, const xmlNode *node, tl_urdf_loop *l, int i) {
  const char *which = i ? "link2" : "link1";
  const xmlNode *e;
  TL_TRY(tl_child(p, node, which, &e));
  if (!e)
    return tl_fail(p, TL_ERR_INVALID, node, "<loop_joint> '%s' has no <%s>: expected <%s link=\"NAME\" "
                   "xyz=\"x y z\" rpy=\"r p y\"/> (the frame on that link, in its link frame)", l->name, which,
                   which);
  l->link_line[i] = tl_line(e);
  TL_TRY(tl_get_string(p, e, "link", l->link_name[i], sizeof(l->link_name[i]), 1, "the name of a <link>"));
  TL_TRY(tl_get_numbers(p, e, "xyz", l->frame[i].xyz, 3, 0));
  return tl_get_numbers(p, e, "rpy", l->frame[i].rpy, 3, 0);
}

/* <loop_joint name type>: <link1>, <link2>, <axis> (hinge). */
static tl_status tl_read_loop(tl_parser *p, const xmlNode *node, tl_urdf_loop *l) {
  static const char *const types[] = {"ball", "hinge", "weld"}; /* tl_constraint_type 0, 1, 2 */
  l->line = tl_line(node);
  p->ctx[0] = '\0';
  TL_TRY(tl_get_string(p, node, "name", l->name, sizeof(l->name), 1, "a unique loop joint name"));
  snprintf(p->ctx, sizeof(p->ctx), " in loop '%s'", l->name);
  char type[32];
  TL_TRY(tl_get_string(p, node, "type", type, sizeof(type), 1, "ball, hinge or weld"));
  l->type = -1;
  for (int k = 0; k < 3; k++)
    if (!strcmp(type, types[k])) l->type = k;
  if (l->type < 0)
    return tl_fail(p, TL_ERR_INVALID, node, "loop_joint '%s' has unknown type \"%s\": expected ball, hinge or weld",
                   l->name, type);
  TL_TRY(tl_read_loop_end(p, node, l, 0));
  TL_TRY(tl_read_loop_end(p, node, l, 1));
  const xmlNode *axis;
  TL_TRY(tl_child(p, node, "axis", &axis));
  l->axis[0] = 0, l->axis[1] = 0, l->axis[2] = 1;
  if (axis && l->type != 1)
    return tl_fail(p, TL_ERR_INVALID, axis, "<axis> of loop_joint '%s' of type \"%s\": only a hinge has an axis",
                   l->name, type);
  if (axis) {
    TL_TRY(tl_get_numbers(p, axis, "xyz", l->axis, 3, 1));
    double n = sqrt(l->axis[0] * l->axis[0] + l->axis[1] * l->axis[1] + l->axis[2] * l->axis[2]);
    if (!(n > 1e-12))
      return tl_fail(p, TL_ERR_INVALID, axis, "<axis> of loop_joint '%s' is zero: expected a direction", l->name);
    for (int k = 0; k < 3; k++) l->axis[k] /= n;
  }
  for (const xmlNode *c = node->children; c; c = c->next)
    if (c->type == XML_ELEMENT_NODE && !tl_is(c, "link1") && !tl_is(c, "link2") && !tl_is(c, "axis"))
      return tl_fail(p, TL_ERR_INVALID, c, "unexpected element <%s> in loop_joint '%s': expected <link1>, "
                     "<link2> and (hinge) <axis>", (const char *)c->name, l->name);
  return TL_OK;
}

static int tl_find_link(const tl_name_ref *t, int n, const char *name);

/* Resolve the links of every loop joint; names unique among loop joints. */
static tl_status tl_resolve_loops(tl_parser *p, const tl_name_ref *links) {
  tl_urdf_doc *doc = p->doc;
  for (int i = 0; i < doc->nloop; i++) {
    tl_urdf_loop *l = &doc->loops[i];
    for (int k = 0; k < i; k++)
      if (!strcmp(doc->loops[k].name, l->name))
        return tl_fail_at(p, TL_ERR_INVALID, l->line, "loop_joint", "loop_joint name '%s' is used twice (first "
                          "at line %d): expected unique names", l->name, doc->loops[k].line);
    for (int e = 0; e < 2; e++) {
      l->link[e] = tl_find_link(links, doc->nlink, l->link_name[e]);
      if (l->link[e] < 0)
        return tl_fail_at(p, TL_ERR_INVALID, l->line, "loop_joint", "<link%d link=\"%s\"> (line %d) of "
                          "loop_joint '%s' is not defined: expected the name of a <link>", e + 1,
                          l->link_name[e], l->link_line[e], l->name);
    }
    if (l->link[0] == l->link[1])
      return tl_fail_at(p, TL_ERR_INVALID, l->line, "loop_joint", "loop_joint '%s' joins link '%s' to itself: "
                        "expected two different links", l->name, l->link_name[0]);
  }
  return TL_OK;
}

/* ------------------------------------------------------------------------ */
/* robot                                                                     */

/* Count the <link> and <joint> children of <robot>, allocate the arrays and
 * read every element in file order. */
static tl_status tl_read_robot(tl_parser *p, const xmlNode *robot) {
  tl_urdf_doc *doc = p->doc;
  p->robot_line = tl_line(robot);
  TL_TRY(tl_get_string(p, robot, "name", doc->robot_name, sizeof(doc->robot_name), 0, "a name"));
  for (const xmlNode *c = robot->children; c; c = c->next) {
    if (tl_is(c, "link")) doc->nlink++;
    if (tl_is(c, "joint")) doc->njoint++;
  }
  TL_TRY(tl_alloc_children(p, robot, "material", sizeof(*doc->materials), &doc->nmaterial,
                           (void **)&doc->materials));
  TL_TRY(tl_alloc_children(p, robot, "loop_joint", sizeof(*doc->loops), &doc->nloop, (void **)&doc->loops));
  if (doc->nlink == 0)
    return tl_fail(p, TL_ERR_INVALID, robot, "<robot> has no <link> element: expected at least one link");
  doc->links = calloc((size_t)doc->nlink, sizeof(*doc->links));
  doc->joints = doc->njoint ? calloc((size_t)doc->njoint, sizeof(*doc->joints)) : NULL;
  p->ends = doc->njoint ? calloc((size_t)doc->njoint, sizeof(*p->ends)) : NULL;
  if (!doc->links || (doc->njoint && (!doc->joints || !p->ends)))
    return tl_fail(p, TL_ERR_MEMORY, robot, "out of memory for %d links and %d joints", doc->nlink,
                   doc->njoint);
  int nl = 0, nj = 0, nm = 0, nloop = 0;
  for (const xmlNode *c = robot->children; c; c = c->next) {
    if (tl_is(c, "link")) {
      TL_TRY(tl_read_link(p, c, &doc->links[nl++]));
    } else if (tl_is(c, "joint")) {
      TL_TRY(tl_read_joint(p, c, &doc->joints[nj], nj));
      nj++;
    } else if (tl_is(c, "material")) {
      p->ctx[0] = '\0';
      TL_TRY(tl_read_material(p, c, &doc->materials[nm++], 1));
    } else if (tl_is(c, "loop_joint")) {
      TL_TRY(tl_read_loop(p, c, &doc->loops[nloop++]));
    } else if (c->type == XML_ELEMENT_NODE) {
      tl_skip(doc, c, "");
    }
  }
  if (nm < 2) return TL_OK;
  int a, b;
  tl_name_ref *t = tl_sorted_names(doc->materials[0].name, sizeof(tl_urdf_material), nm, &a, &b);
  if (!t) return tl_fail(p, TL_ERR_MEMORY, robot, "out of memory");
  free(t);
  if (a >= 0)
    return tl_fail_at(p, TL_ERR_INVALID, doc->materials[b].line, "material", "material name '%s' is used "
                      "twice (first at line %d): expected unique names for the materials of <robot>",
                      doc->materials[b].name, doc->materials[a].line);
  return TL_OK;
}

/* ------------------------------------------------------------------------ */
/* structure                                                                 */

static int tl_name_ref_cmp(const void *a, const void *b) {
  const tl_name_ref *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : (x->index > y->index) - (x->index < y->index);
}

static int tl_name_key_cmp(const void *key, const void *elem) {
  return strcmp((const char *)key, ((const tl_name_ref *)elem)->name);
}

/* Sorted (name, index) table of n names at base + i * stride; the first
 * duplicate in sort order goes to *dup_a < *dup_b (file order), else -1. */
static tl_name_ref *tl_sorted_names(const char *base, size_t stride, int n, int *dup_a, int *dup_b) {
  tl_name_ref *t = malloc((size_t)(n > 0 ? n : 1) * sizeof(*t));
  *dup_a = *dup_b = -1;
  if (!t) return NULL;
  for (int i = 0; i < n; i++) t[i].name = base + (size_t)i * stride, t[i].index = i;
  qsort(t, (size_t)n, sizeof(*t), tl_name_ref_cmp);
  for (int i = 1; i < n && *dup_a < 0; i++)
    if (strcmp(t[i - 1].name, t[i].name) == 0) *dup_a = t[i - 1].index, *dup_b = t[i].index;
  return t;
}

/* Link index of `name` in the sorted table, or -1. */
static int tl_find_link(const tl_name_ref *t, int n, const char *name) {
  const tl_name_ref *r = bsearch(name, t, (size_t)n, sizeof(*t), tl_name_key_cmp);
  return r ? r->index : -1;
}

/* Resolve parent_link / child_link of every joint; fill parent_joint[link]. */
static tl_status tl_resolve_joints(tl_parser *p, const tl_name_ref *links, int *parent_joint) {
  tl_urdf_doc *doc = p->doc;
  for (int i = 0; i < doc->njoint; i++) {
    tl_urdf_joint *j = &doc->joints[i];
    const tl_joint_ends *e = &p->ends[i];
    j->parent_link = tl_find_link(links, doc->nlink, e->parent);
    j->child_link = tl_find_link(links, doc->nlink, e->child);
    if (j->parent_link < 0)
      return tl_fail_at(p, TL_ERR_INVALID, e->parent_line, "parent", "parent link '%s' of joint '%s' "
                        "is not defined: expected the name of a <link>", e->parent, j->name);
    if (j->child_link < 0)
      return tl_fail_at(p, TL_ERR_INVALID, e->child_line, "child", "child link '%s' of joint '%s' "
                        "is not defined: expected the name of a <link>", e->child, j->name);
    if (j->parent_link == j->child_link)
      return tl_fail_at(p, TL_ERR_INVALID, j->line, "joint", "joint '%s' connects link '%s' to "
                        "itself: expected two different links", j->name, e->child);
    int prev = parent_joint[j->child_link];
    if (prev >= 0)
      return tl_fail_at(p, TL_ERR_INVALID, e->child_line, "child", "link '%s' is the child of joint "
                        "'%s' (line %d) and of joint '%s': a link can have only one parent joint",
                        e->child, doc->joints[prev].name, doc->joints[prev].line, j->name);
    parent_joint[j->child_link] = i;
  }
  return TL_OK;
}

/* Describe the cycle of parent links that link `start` leads into (every
 * link on the way must have a parent joint) into text; return the joint of
 * the cycle written last in the file. After nlink steps up from any link the
 * walk is on the cycle. */
static int tl_describe_cycle(const tl_urdf_doc *doc, const int *parent_joint, int start, char *text,
                             size_t cap) {
  int c = start;
  for (int k = 0; k < doc->nlink; k++) c = doc->joints[parent_joint[c]].parent_link;
  int last = parent_joint[c];
  size_t n = (size_t)snprintf(text, cap, "'%s'", doc->links[c].name);
  for (int l = doc->joints[parent_joint[c]].parent_link;; l = doc->joints[parent_joint[l]].parent_link) {
    if (n < cap) n += (size_t)snprintf(text + n, cap - n, " -> '%s'", doc->links[l].name);
    if (l == c) break;
    if (doc->joints[parent_joint[l]].line > doc->joints[last].line) last = parent_joint[l];
  }
  return last;
}

/* The unique root link (no parent joint), or an error naming them all. */
static tl_status tl_find_root(tl_parser *p, const int *parent_joint) {
  tl_urdf_doc *doc = p->doc;
  int nroot = 0, second = -1;
  char names[400] = "";
  size_t n = 0;
  for (int i = 0; i < doc->nlink; i++) {
    if (parent_joint[i] >= 0) continue;
    if (nroot == 0) doc->root_link = i;
    if (nroot == 1) second = i;
    if (nroot < TL_ROOTS_LISTED && n < sizeof(names))
      n += (size_t)snprintf(names + n, sizeof(names) - n, "%s'%s' (line %d)", nroot ? ", " : "",
                            doc->links[i].name, doc->links[i].line);
    nroot++;
  }
  if (nroot > TL_ROOTS_LISTED && n < sizeof(names))
    snprintf(names + n, sizeof(names) - n, " and %d more", nroot - TL_ROOTS_LISTED);
  if (nroot > 1)
    return tl_fail_at(p, TL_ERR_INVALID, doc->links[second].line, "link", "more than one root link "
                      "(a link that is no joint's child): %s: expected exactly one, connect the others "
                      "with joints", names);
  if (nroot == 0) {
    char cycle[400];
    tl_describe_cycle(doc, parent_joint, 0, cycle, sizeof(cycle));
    return tl_fail_at(p, TL_ERR_INVALID, p->robot_line, "robot", "no root link: every link is the "
                      "child of a joint, links %s form a cycle: expected a tree", cycle);
  }
  return TL_OK;
}

/* Every link must reach the root through its parent joints; a link that does
 * not sits on (or hangs below) a cycle. State per link: 0 unknown, 1 on the
 * current path, 2 reaches the root. O(nlink). */
static tl_status tl_check_tree(tl_parser *p, const int *parent_joint) {
  tl_urdf_doc *doc = p->doc;
  int *state = calloc((size_t)doc->nlink, sizeof(int));
  if (!state) return tl_fail_at(p, TL_ERR_MEMORY, 0, NULL, "out of memory");
  state[doc->root_link] = 2;
  for (int i = 0; i < doc->nlink; i++) {
    int l = i;
    while (state[l] == 0) state[l] = 1, l = doc->joints[parent_joint[l]].parent_link;
    int cyclic = state[l] == 1;
    for (int k = i; state[k] == 1; k = doc->joints[parent_joint[k]].parent_link) state[k] = 2;
    if (!cyclic) continue;
    free(state);
    char cycle[400];
    int j = tl_describe_cycle(doc, parent_joint, i, cycle, sizeof(cycle));
    return tl_fail_at(p, TL_ERR_INVALID, doc->joints[j].line, "joint", "joint '%s' closes a cycle: "
                      "links %s (each the child of the next) do not reach the root link '%s': "
                      "expected a tree", doc->joints[j].name, cycle, doc->links[doc->root_link].name);
  }
  free(state);
  return TL_OK;
}

/* Resolve every <mimic joint>: the joint must exist and differ from the
 * mimicking one, and following the chain of mimics must not come back. */
static tl_status tl_resolve_mimics(tl_parser *p, const tl_name_ref *joints) {
  tl_urdf_doc *doc = p->doc;
  for (int i = 0; i < doc->njoint; i++) {
    tl_urdf_joint *j = &doc->joints[i];
    if (!j->mimic_line) continue;
    const char *name = p->ends[i].mimic;
    j->mimic_joint = tl_find_link(joints, doc->njoint, name);
    if (j->mimic_joint < 0)
      return tl_fail_at(p, TL_ERR_INVALID, j->mimic_line, "mimic", "joint '%s' mimics joint '%s', "
                        "which is not defined: expected the name of a <joint>", j->name, name);
    if (j->mimic_joint == i)
      return tl_fail_at(p, TL_ERR_INVALID, j->mimic_line, "mimic", "joint '%s' mimics itself: "
                        "expected the name of another joint", j->name);
  }
  /* each joint follows at most one: walk the chains once, state 0 unseen, 1 on the current
   * chain, 2 ends well. O(njoint). */
  char *state = calloc((size_t)(doc->njoint > 0 ? doc->njoint : 1), 1);
  if (!state) return tl_fail_at(p, TL_ERR_MEMORY, 0, NULL, "out of memory");
  for (int i = 0; i < doc->njoint; i++) {
    int k = i;
    while (k >= 0 && state[k] == 0) state[k] = 1, k = doc->joints[k].mimic_joint;
    int cyclic = k >= 0 && state[k] == 1;
    for (int c = i; c >= 0 && state[c] == 1; c = doc->joints[c].mimic_joint) state[c] = 2;
    if (!cyclic) continue;
    free(state);
    const tl_urdf_joint *j = &doc->joints[k];
    return tl_fail_at(p, TL_ERR_INVALID, j->mimic_line, "mimic", "joint '%s' mimics joint '%s', and "
                      "the chain of <mimic> elements comes back to it: expected each chain to end at "
                      "a joint that mimics none", j->name, doc->joints[j->mimic_joint].name);
  }
  free(state);
  return TL_OK;
}

/* Unique names, resolved joints, a single root and a tree. */
static tl_status tl_check_structure(tl_parser *p) {
  tl_urdf_doc *doc = p->doc;
  int a, b;
  tl_name_ref *joints = tl_sorted_names(doc->joints ? doc->joints[0].name : NULL,
                                        sizeof(tl_urdf_joint), doc->njoint, &a, &b);
  if (!joints) return tl_fail_at(p, TL_ERR_MEMORY, 0, NULL, "out of memory");
  tl_status mst = a >= 0 ? TL_OK : tl_resolve_mimics(p, joints);
  free(joints);
  if (a >= 0)
    return tl_fail_at(p, TL_ERR_INVALID, doc->joints[b].line, "joint", "joint name '%s' is used twice "
                      "(first at line %d): expected unique joint names", doc->joints[b].name,
                      doc->joints[a].line);
  TL_TRY(mst);
  tl_name_ref *links = tl_sorted_names(doc->links[0].name, sizeof(tl_urdf_link), doc->nlink, &a, &b);
  int *parent_joint = malloc((size_t)doc->nlink * sizeof(int));
  tl_status st = TL_OK;
  if (!links || !parent_joint)
    st = tl_fail_at(p, TL_ERR_MEMORY, 0, NULL, "out of memory");
  else if (a >= 0)
    st = tl_fail_at(p, TL_ERR_INVALID, doc->links[b].line, "link", "link name '%s' is used twice "
                    "(first at line %d): expected unique link names", doc->links[b].name,
                    doc->links[a].line);
  if (st == TL_OK) {
    for (int i = 0; i < doc->nlink; i++) parent_joint[i] = -1;
    st = tl_resolve_joints(p, links, parent_joint);
  }
  if (st == TL_OK) st = tl_find_root(p, parent_joint);
  if (st == TL_OK) st = tl_check_tree(p, parent_joint);
  if (st == TL_OK) st = tl_resolve_loops(p, links);
  free(links);
  free(parent_joint);
  return st;
}

/* ------------------------------------------------------------------------ */
/* bytes and XML                                                             */

/* Move an XML declaration that follows comments or white space to the front
 * of the buffer (after a byte order mark). Only comments and white space move
 * behind it, so no element changes line. */
static void tl_hoist_xml_decl(char *buf, size_t len) {
  size_t start = (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) ? 3 : 0, i = start;
  for (;;) {
    while (i < len && tl_is_space(buf[i])) i++;
    if (i + 4 > len || memcmp(buf + i, "<!--", 4) != 0) break;
    char *end = NULL;
    for (size_t k = i + 4; k + 3 <= len && !end; k++)
      if (memcmp(buf + k, "-->", 3) == 0) end = buf + k;
    if (!end) return;
    i = (size_t)(end - buf) + 3;
  }
  if (i == start || i + 6 > len || memcmp(buf + i, "<?xml", 5) != 0 || !tl_is_space(buf[i + 5])) return;
  size_t close = i + 5;
  while (close + 2 <= len && memcmp(buf + close, "?>", 2) != 0) close++;
  if (close + 2 > len) return;
  size_t dlen = close + 2 - i, plen = i - start;
  char *decl = malloc(dlen);
  if (!decl) return;
  memcpy(decl, buf + i, dlen);
  memmove(buf + start + dlen, buf + start, plen);
  memcpy(buf + start, decl, dlen);
  free(decl);
}

/* An XML declaration whose version is not 1.x (PyBullet's data writes
 * version="0.0" in about thirty files, Minitaur's among them; TinyXML, which
 * urdfdom and PyBullet use, ignores the version, libxml2 refuses it) is read
 * as version 1.0, with a warning: the value is overwritten in place, a longer
 * one padded with spaces after its closing quote, so no offset or line
 * changes. A value shorter than three characters is left to libxml2's error. */
static void tl_fix_xml_version(tl_parser *p, char *buf, size_t len) {
  size_t i = (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) ? 3 : 0;
  if (i + 6 > len || memcmp(buf + i, "<?xml", 5) != 0 || !tl_is_space(buf[i + 5])) return;
  size_t close = i + 5;
  while (close + 2 <= len && memcmp(buf + close, "?>", 2) != 0) close++;
  if (close + 2 > len) return;
  size_t v = i + 5;
  while (v < close && tl_is_space(buf[v])) v++;
  if (close - v < 7 || memcmp(buf + v, "version", 7) != 0) return;
  v += 7;
  while (v < close && tl_is_space(buf[v])) v++;
  if (v >= close || buf[v] != '=') return;
  v++;
  while (v < close && tl_is_space(buf[v])) v++;
  if (v >= close || (buf[v] != '"' && buf[v] != '\'')) return;
  const char quote = buf[v++];
  size_t end = v;
  while (end < close && buf[end] != quote) end++;
  if (end >= close || end - v < 3 || (buf[v] == '1' && buf[v + 1] == '.')) return;
  tl_warn(p->doc, "line 1: XML declaration version '%.*s' read as 1.0 (XML has only 1.x; urdfdom and "
          "PyBullet ignore the version)", (int)(end - v < 16 ? end - v : 16), buf + v);
  memcpy(buf + v, "1.0", 3);
  buf[v + 3] = quote;
  for (size_t k = v + 4; k <= end; k++) buf[k] = ' ';
}

/* Parse buf with libxml2 (see the file comment for the options). */
static tl_status tl_parse_xml(tl_parser *p, const char *buf, size_t len, xmlDocPtr *out) {
  int line;
  char msg[400];
  if (tl_xml_parse(buf, len, out, &line, msg, sizeof(msg)))
    return tl_fail_at(p, TL_ERR_PARSE, line, NULL, "malformed XML: %s", msg);
  return TL_OK;
}

/* Parse the normalised buffer into p->doc. */
static tl_status tl_parse_buffer(tl_parser *p, char *buf, size_t len) {
  while (len > 0 && buf[len - 1] == '\0') len--;
  size_t k = (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) ? 3 : 0;
  while (k < len && tl_is_space(buf[k])) k++;
  if (k == len) return tl_fail_at(p, TL_ERR_PARSE, 0, NULL, "file is empty: expected a <robot> element");
  tl_hoist_xml_decl(buf, len);
  tl_fix_xml_version(p, buf, len);
  xmlDocPtr xml;
  TL_TRY(tl_parse_xml(p, buf, len, &xml));
  const xmlNode *robot = xmlDocGetRootElement(xml);
  tl_status st;
  if (!robot || !tl_is(robot, "robot"))
    st = tl_fail(p, TL_ERR_PARSE, robot, "root element is <%s>: expected <robot>",
                 robot ? (const char *)robot->name : "");
  else
    st = tl_read_robot(p, robot);
  xmlFreeDoc(xml);
  if (st == TL_OK) st = tl_check_structure(p);
  return st;
}

/* Run the parser on buf (owned by the caller, modified) in the C locale, so
 * strtod reads '.' as the decimal point whatever the application's locale. */
static tl_status tl_parse(char *buf, size_t len, const char *name, tl_urdf_doc *doc, tl_error *err) {
  tl_parser p;
  memset(&p, 0, sizeof(p));
  p.doc = doc;
  p.err = err;
  snprintf(doc->path, sizeof(doc->path), "%s", name);
  locale_t c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
  locale_t old = c_locale ? uselocale(c_locale) : (locale_t)0;
  tl_status st = tl_parse_buffer(&p, buf, len);
  if (c_locale) {
    uselocale(old);
    freelocale(c_locale);
  }
  free(p.ends);
  if (st != TL_OK) tl_urdf_doc_free(doc);
  return st;
}


/* ------------------------------------------------------------------------ */
/* public (internal API)                                                     */

tl_status tl_urdf_parse_file(const char *path, tl_urdf_doc *doc, tl_error *err) {
  if (!doc) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "doc", "doc is NULL");
  memset(doc, 0, sizeof(*doc));
  if (!path) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "path", "path is NULL");
  char *buf;
  size_t len;
  TL_TRY(tl_read_file(path, (size_t)1 << 31, &buf, &len, err));
  tl_status st = tl_parse(buf, len, path, doc, err);
  free(buf);
  return st;
}

tl_status tl_urdf_parse_string(const char *text, size_t len, const char *name, tl_urdf_doc *doc,
                               tl_error *err) {
  if (!doc) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "doc", "doc is NULL");
  memset(doc, 0, sizeof(*doc));
  if (!text && len > 0) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "text", "text is NULL");
  if (!name) name = "<string>";
  char *buf = malloc(len > 0 ? len : 1);
  if (!buf) return tl_error_set(err, TL_ERR_MEMORY, name, 0, NULL, "out of memory for %zu bytes", len);
  if (len > 0) memcpy(buf, text, len);
  tl_status st = tl_parse(buf, len, name, doc, err);
  free(buf);
  return st;
}

void tl_urdf_doc_free(tl_urdf_doc *doc) {
  if (!doc) return;
  for (int i = 0; i < doc->nlink && doc->links; i++) {
    for (int k = 0; k < doc->links[i].ngeom; k++) {
      free(doc->links[i].geoms[k].hull_vert);
      free(doc->links[i].geoms[k].hull_face);
    }
    free(doc->links[i].geoms);
    free(doc->links[i].visuals);
  }
  free(doc->materials);
  free(doc->loops);
  free(doc->links);
  free(doc->joints);
  memset(doc, 0, sizeof(*doc));
}
