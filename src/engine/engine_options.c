/* Engine options as a struct (talus/engine.h, tl_engine_options): the
 * engine's name and its KEY=VALUE settings, written out as the text
 * "NAME[:KEY=VALUE,...]" that tl_world_create_with_engine / tl_world_set_engine
 * take (the engine itself reads its settings from that text, so a world put on
 * an engine through the struct and through the text is the same world), and
 * parsed back from it for the command line and Python. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "talus/engine.h"
#include "talus/world.h"

tl_engine_options tl_engine_options_default(void) {
  tl_engine_options o;
  memset(&o, 0, sizeof o);
  o.name = "talus";
  return o;
}

static int name_ok(const char *s, size_t n) {
  if (n == 0 || n >= 48) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return 0;
  }
  return 1;
}

static int key_ok(const char *k) {
  if (!k || !*k) return 0;
  for (; *k; k++)
    if (*k == ',' || *k == ':' || *k == '=' || isspace((unsigned char)*k)) return 0;
  return 1;
}

tl_status tl_engine_options_format(const tl_engine_options *opt, char *buf, size_t len, tl_error *err) {
  tl_engine_options def = tl_engine_options_default();
  if (!opt) opt = &def;
  if (!buf || len == 0) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "buf", "buf must not be NULL or empty");
  buf[0] = '\0';
  if (!opt->name || !name_ok(opt->name, strlen(opt->name)))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "name",
                        "engine name '%s': expected 1 to 47 lower-case letters, digits, '_' or '-'",
                        opt->name ? opt->name : "(null)");
  if (opt->nopt < 0 || opt->nopt > TL_ENGINE_MAX_OPTIONS || (opt->nopt > 0 && !opt->opts))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "nopt", "nopt is %d: expected 0 .. %d with an opts array",
                        opt->nopt, TL_ENGINE_MAX_OPTIONS);
  size_t n = (size_t)snprintf(buf, len, "%s", opt->name);
  for (int i = 0; i < opt->nopt && n < len; i++) {
    const tl_engine_option *o = &opt->opts[i];
    if (!key_ok(o->key))
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "opts",
                          "engine option %d: key '%s' must be non-empty, without ',', ':', '=' or spaces", i,
                          o->key ? o->key : "(null)");
    if (!o->value || strchr(o->value, ','))
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, o->key, "engine option %s: value '%s' must not hold ','",
                          o->key, o->value ? o->value : "(null)");
    n += (size_t)snprintf(buf + n, len - n, "%c%s=%s", i == 0 ? ':' : ',', o->key, o->value);
  }
  if (n >= len) {
    buf[0] = '\0';
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "buf", "the engine text needs more than %zu bytes", len - 1);
  }
  return TL_OK;
}

tl_status tl_engine_options_parse(const char *text, tl_engine_options *out, tl_engine_option *pairs, int cap,
                                  char *buf, size_t len, tl_error *err) {
  if (!text || !out || !buf || (cap > 0 && !pairs) || cap < 0)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "engine", "text, out and buf must not be NULL");
  size_t tn = strlen(text);
  if (tn + 1 > len)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "buf", "engine text of %zu characters: buf has %zu bytes", tn,
                        len);
  memcpy(buf, text, tn + 1);
  tl_engine_options o = tl_engine_options_default();
  char *colon = strchr(buf, ':');
  if (colon) *colon = '\0';
  if (!name_ok(buf, strlen(buf)))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "engine",
                        "engine name '%s': expected NAME or NAME:OPTIONS, NAME of 1 to 47 lower-case letters, "
                        "digits, '_' or '-'", buf);
  o.name = buf;
  o.opts = pairs;
  for (char *p = colon ? colon + 1 : NULL; p && *p;) {
    char *end = strchr(p, ',');
    if (end) *end = '\0';
    if (*p) {
      char *eq = strchr(p, '=');
      if (!eq || eq == p)
        return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, p, "engine option '%s': expected KEY=VALUE", p);
      if (o.nopt >= cap)
        return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, p, "engine option '%s': more than %d options", p, cap);
      *eq = '\0';
      pairs[o.nopt].key = p;
      pairs[o.nopt].value = eq + 1;
      o.nopt++;
    }
    p = end ? end + 1 : NULL;
  }
  *out = o;
  return TL_OK;
}

tl_status tl_engine_create_world(const tl_engine_options *opt, tl_world **out, tl_error *err) {
  char text[4096];
  tl_status st = tl_engine_options_format(opt, text, sizeof text, err);
  if (st) return st;
  return tl_world_create_with_engine(out, text, err);
}

tl_status tl_engine_attach_world(tl_world *world, const tl_engine_options *opt, tl_error *err) {
  char text[4096];
  tl_status st = tl_engine_options_format(opt, text, sizeof text, err);
  if (st) return st;
  return tl_world_set_engine(world, text, err);
}
