/* Sweep files (docs/sweeps.md): <talus_sweep> with <robot>, <var>,
 * <controller> (<param>), <run>, <fall>, <param>, <terrain>, <output>; every
 * attribute becomes a setting of tl_sweep_set. Read with the world files'
 * hardened libxml2 reader and attribute checks (src/scene/), so errors have
 * the same form: "FILE:LINE: <element>: what is wrong". */
#define _XOPEN_SOURCE 700

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/file.h"
#include "base/xml.h"
#include "scene/scene_internal.h"
#include "sweep/sweep_internal.h"

int tl_sweep_is_file(const char *path) {
  char buf[65536], name[64];
  long got = tl_read_head(path, buf, sizeof buf); /* a FIFO or device is not waited on */
  if (got < 0) return -1;
  return tl_xml_root_name(buf, (size_t)got, name, sizeof name) == 0 && strcmp(name, "talus_sweep") == 0;
}

/* tl_sweep_set(key, value) for an attribute of node; errors name the file, line and element. */
static tl_status set_at(sc_parser *p, tl_sweep *sw, const xmlNode *node, const char *key, const char *value) {
  tl_error e;
  memset(&e, 0, sizeof e);
  if (tl_sweep_set(sw, key, value, &e) == TL_OK) return TL_OK;
  return sc_fail(p, e.status, node, "%s", e.message);
}

/* Each attribute of node (allowed[i], as setting keys[i]) that is present. */
static tl_status attrs(sc_parser *p, tl_sweep *sw, const xmlNode *node, const char *const *allowed,
                       const char *const *keys) {
  tl_status st = sc_check_attrs(p, node, allowed);
  if (st == TL_OK) st = sc_check_empty(p, node);
  for (int i = 0; allowed[i] && st == TL_OK; ++i) {
    const char *v = sc_attr(node, allowed[i]);
    if (v) st = set_at(p, sw, node, keys[i], v);
  }
  return st;
}

static tl_status robot(sc_parser *p, tl_sweep *sw, const xmlNode *node) {
  static const char *const allowed[] = {"urdf", "world", "base", "q", "ground_friction", NULL};
  tl_status st = sc_check_attrs(p, node, allowed);
  if (st == TL_OK) st = sc_check_empty(p, node);
  if (st != TL_OK) return st;
  int has_urdf = sc_attr(node, "urdf") != NULL, has_world = sc_attr(node, "world") != NULL;
  if (has_urdf == has_world) return sc_fail(p, TL_ERR_INVALID, node, "give exactly one of urdf=\"...\" and world=\"...\"");
  char *path = NULL;
  st = sc_path(p, node, has_urdf ? "urdf" : "world", &path);
  if (st == TL_OK) st = set_at(p, sw, node, "robot", path);
  free(path);
  static const char *const rest[] = {"base", "q", "ground_friction", NULL};
  for (int i = 0; rest[i] && st == TL_OK; ++i) {
    const char *v = sc_attr(node, rest[i]);
    if (v) st = set_at(p, sw, node, rest[i], v);
  }
  return st;
}

static tl_status var(sc_parser *p, tl_sweep *sw, const xmlNode *node) {
  static const char *const allowed[] = {"name", "value", NULL};
  const char *name = NULL, *value = NULL;
  tl_status st = sc_check_attrs(p, node, allowed);
  if (st == TL_OK) st = sc_check_empty(p, node);
  if (st == TL_OK) st = sc_require(p, node, "name", &name);
  if (st == TL_OK) st = sc_require(p, node, "value", &value);
  if (st != TL_OK) return st;
  char buf[512];
  snprintf(buf, sizeof buf, "%s=%s", name, value);
  return set_at(p, sw, node, "var", buf);
}

/* <controller name="trot" kp=".." kd=".."><param key="speed" value="0.5"/></controller> */
static tl_status controller(sc_parser *p, tl_sweep *sw, const xmlNode *node) {
  static const char *const allowed[] = {"name", "kp", "kd", NULL};
  const char *name = NULL;
  tl_status st = sc_check_attrs(p, node, allowed);
  if (st == TL_OK) st = sc_require(p, node, "name", &name);
  if (st != TL_OK) return st;
  char text[4096];
  size_t n = 0;
  text[0] = '\0';
  tl_str_append(text, sizeof text, &n, "%s", name);
  int k = 0;
  for (const xmlNode *c = node->children; c && st == TL_OK; c = c->next) {
    if (c->type == XML_TEXT_NODE || c->type == XML_COMMENT_NODE) continue;
    if (!sc_is(c, "param")) return sc_fail(p, TL_ERR_INVALID, c, "unexpected element inside <controller> (known: param)");
    static const char *const pa[] = {"key", "value", NULL};
    const char *key = NULL, *value = NULL;
    st = sc_check_attrs(p, c, pa);
    if (st == TL_OK) st = sc_check_empty(p, c);
    if (st == TL_OK) st = sc_require(p, c, "key", &key);
    if (st == TL_OK) st = sc_require(p, c, "value", &value);
    if (st == TL_OK) tl_str_append(text, sizeof text, &n, "%s%s=%s", k++ ? "," : ":", key, value);
  }
  if (st == TL_OK) st = set_at(p, sw, node, "controller", text);
  for (int i = 1; allowed[i] && st == TL_OK; ++i) {
    const char *v = sc_attr(node, allowed[i]);
    if (v) st = set_at(p, sw, node, allowed[i], v);
  }
  return st;
}

static tl_status param(sc_parser *p, tl_sweep *sw, const xmlNode *node) {
  static const char *const allowed[] = {"name", "dist", NULL};
  const char *name = NULL, *dist = NULL;
  tl_status st = sc_check_attrs(p, node, allowed);
  if (st == TL_OK) st = sc_check_empty(p, node);
  if (st == TL_OK) st = sc_require(p, node, "name", &name);
  if (st == TL_OK) st = sc_require(p, node, "dist", &dist);
  if (st != TL_OK) return st;
  char buf[512];
  snprintf(buf, sizeof buf, "%s=%s", name, dist);
  return set_at(p, sw, node, "param", buf);
}

/* An output path of a sweep file: relative to the file's folder and inside it
 * (a downloaded sweep file must not write anywhere else: no absolute path, no
 * "..", no symbolic link leading out). The command line's --out, --summary
 * and --plot override these and may go anywhere. *out: malloc'ed path. */
static tl_status confined_path(sc_parser *p, const xmlNode *node, const char *attr, char **out) {
  *out = NULL;
  const char *v = sc_attr(node, attr);
  if (!v[0]) return sc_fail(p, TL_ERR_INVALID, node, "%s=\"\": an empty path", attr);
  if (v[0] == '/')
    return sc_fail(p, TL_ERR_INVALID, node, "%s=\"%s\": an absolute path; a sweep file's outputs stay in its folder "
                   "(give the path with --%s on the command line to write elsewhere)", attr, v,
                   strcmp(attr, "csv") == 0 ? "out" : attr);
  for (const char *c = v; *c;) {
    size_t n = strcspn(c, "/");
    if (n == 2 && c[0] == '.' && c[1] == '.')
      return sc_fail(p, TL_ERR_INVALID, node, "%s=\"%s\": '..' leaves the sweep file's folder (give the path with "
                     "--%s on the command line to write elsewhere)", attr, v, strcmp(attr, "csv") == 0 ? "out" : attr);
    c += n;
    while (*c == '/') c++;
  }
  tl_status st = sc_path(p, node, attr, out);
  if (st != TL_OK) return st;
  /* no symbolic link on the way may lead out of the folder */
  char *base = realpath(p->dir[0] ? p->dir : ".", NULL), *at = NULL;
  char parent[4096];
  const char *slash = strrchr(*out, '/');
  if (slash) snprintf(parent, sizeof parent, "%.*s", (int)(slash - *out), *out);
  else snprintf(parent, sizeof parent, ".");
  struct stat ls;
  at = lstat(*out, &ls) == 0 && S_ISLNK(ls.st_mode) ? realpath(*out, NULL) : realpath(parent, NULL);
  size_t bn = base ? strlen(base) : 0;
  int inside = !at || (base && strncmp(at, base, bn) == 0 && (at[bn] == '\0' || at[bn] == '/' || bn == 1));
  free(base);
  free(at);
  if (!inside) {
    free(*out);
    *out = NULL;
    return sc_fail(p, TL_ERR_INVALID, node, "%s=\"%s\": a symbolic link leads out of the sweep file's folder", attr, v);
  }
  return TL_OK;
}

/* <output csv summary plot worst>: paths confined to the file's folder. */
static tl_status output(sc_parser *p, tl_sweep *sw, const xmlNode *node) {
  static const char *const a[] = {"csv", "summary", "plot", "worst", NULL}, *const k[] = {"out", "summary", "plot", "worst", NULL};
  tl_status st = sc_check_attrs(p, node, a);
  if (st == TL_OK) st = sc_check_empty(p, node);
  for (int i = 0; a[i] && st == TL_OK; ++i) {
    if (!sc_attr(node, a[i])) continue;
    if (strcmp(a[i], "worst") == 0) {
      st = set_at(p, sw, node, k[i], sc_attr(node, a[i]));
      continue;
    }
    char *path = NULL;
    st = confined_path(p, node, a[i], &path);
    if (st == TL_OK) st = set_at(p, sw, node, k[i], path);
    free(path);
  }
  return st;
}

static tl_status element(sc_parser *p, tl_sweep *sw, const xmlNode *node) {
  if (sc_is(node, "robot")) return robot(p, sw, node);
  if (sc_is(node, "var")) return var(p, sw, node);
  if (sc_is(node, "controller")) return controller(p, sw, node);
  if (sc_is(node, "param")) return param(p, sw, node);
  if (sc_is(node, "run")) {
    static const char *const a[] = {"duration", "dt", "samples", "seed", "threads", NULL};
    return attrs(p, sw, node, a, a);
  }
  if (sc_is(node, "fall")) {
    static const char *const a[] = {"height", "tilt", NULL}, *const k[] = {"fall_height", "fall_tilt", NULL};
    return attrs(p, sw, node, a, k);
  }
  if (sc_is(node, "terrain")) {
    static const char *const a[] = {"size", "spacing", NULL}, *const k[] = {"terrain_size", "terrain_spacing", NULL};
    return attrs(p, sw, node, a, k);
  }
  if (sc_is(node, "output")) return output(p, sw, node);
  return sc_fail(p, TL_ERR_INVALID, node, "unknown element (known: robot, var, controller, run, fall, param, terrain, "
                 "output)");
}

tl_status tl_sweep_load_file(tl_sweep *sw, const char *path, tl_error *err) {
  if (!sw || !path) return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "path", "sw and path must not be NULL");
  sc_parser p;
  memset(&p, 0, sizeof p);
  p.path = path;
  p.err = err;
  const char *slash = strrchr(path, '/');
  if (slash) snprintf(p.dir, sizeof p.dir, "%.*s/", (int)(slash - path), path);
  char *buf = NULL;
  size_t len = 0;
  tl_status st = sc_read_file(path, &buf, &len, err);
  if (st != TL_OK) return st;
  xmlDocPtr doc = NULL;
  st = sc_parse_xml(&p, buf, len, &doc);
  free(buf);
  if (st != TL_OK) return st;
  xmlNode *root = xmlDocGetRootElement(doc);
  if (root && root->ns && xmlStrEqual(root->name, (const xmlChar *)"talus_sweep")) {
    st = sc_fail(&p, TL_ERR_INVALID, root, "<talus_sweep> is in namespace '%s': sweep files take no namespace "
                 "(remove xmlns)", root->ns->href ? (const char *)root->ns->href : "");
  } else if (!sc_is(root, "talus_sweep")) {
    st = sc_fail(&p, TL_ERR_INVALID, root, "the root element must be <talus_sweep>");
  } else {
    static const char *const allowed[] = {"name", NULL};
    st = sc_check_attrs(&p, root, allowed);
  }
  static const char *const single[] = {"robot", "controller", "run", "fall", "terrain", "output", NULL};
  int first[6] = {0, 0, 0, 0, 0, 0};
  for (xmlNode *c = root ? root->children : NULL; c && st == TL_OK; c = c->next) {
    if (c->type == XML_COMMENT_NODE) continue;
    if (c->type == XML_TEXT_NODE) {
      for (const xmlChar *t = c->content; t && *t && st == TL_OK; t++)
        if (*t != ' ' && *t != '\t' && *t != '\r' && *t != '\n')
          st = sc_fail(&p, TL_ERR_INVALID, root, "unexpected text inside <talus_sweep>");
      continue;
    }
    /* one of each, as world files have one of each of their settings: a repeat is refused, not
     * silently the last one taken */
    for (int i = 0; single[i] && st == TL_OK; ++i)
      if (sc_is(c, single[i])) {
        if (first[i]) st = sc_fail(&p, TL_ERR_INVALID, c, "given twice (first at line %d)", first[i]);
        first[i] = sc_line(c);
      }
    if (st == TL_OK) st = element(&p, sw, c);
  }
  xmlFreeDoc(doc);
  return st;
}
