/* RaiSim-style URDF templates: `@@Name` variables and `{expression}`
 * arithmetic, replaced from a map given at load time.
 *
 *  - `@@Name` (Name: a letter or '_', then letters, digits, '_') is replaced
 *    by the variable's value, written with the fewest digits that read back
 *    to the same double. An undefined variable is an error naming it and its
 *    line.
 *  - `{...}` on one line whose content is an arithmetic expression (numbers,
 *    variables, + - * /, parentheses, unary minus; usual precedence, left to
 *    right) is replaced by its value. Braces whose content holds anything
 *    else (letters that are not a variable, `$`, ...) are left alone, so
 *    ordinary text with braces passes through; a division by zero or an
 *    expression that stops halfway ("{1 +}") is an error with its line.
 *  - XML comments are copied unchanged. No newline is added or removed, so
 *    every line number of the result is the line number of the template.
 * Recursive descent over the grammar
 *   expr := term (('+' | '-') term)*;  term := unary (('*' | '/') unary)*;
 *   unary := ('-' | '+') unary | primary;  primary := number | variable | '(' expr ')'. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "urdf/urdf_template.h"

typedef struct tpl_ctx {
  const char *name;                    /* file name for errors */
  const char *const *names;
  const double *values;
  int nvar;
  tl_error *err;
} tpl_ctx;

typedef struct out_buf {
  char *p;
  size_t n, cap;
  int failed;
} out_buf;

static void put(out_buf *b, const char *s, size_t n) {
  if (b->failed) return;
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (b->n + n + 1 > cap) cap *= 2;
    char *q = realloc(b->p, cap);
    if (!q) {
      b->failed = 1;
      return;
    }
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

/* Shortest "%.Ng" that reads back to v. */
static void format_value(char *dst, size_t cap, double v) {
  for (int digits = 15; digits <= 17; digits++) {
    snprintf(dst, cap, "%.*g", digits, v);
    if (strtod(dst, NULL) == v) return;
  }
}

static int is_name_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static int is_name_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Value of variable s[0..n), or -1 if undefined. */
static int find_var(const tpl_ctx *c, const char *s, size_t n) {
  for (int i = 0; i < c->nvar; i++)
    if (strlen(c->names[i]) == n && strncmp(c->names[i], s, n) == 0) return i;
  return -1;
}

static tl_status undefined(const tpl_ctx *c, int line, const char *s, size_t n) {
  return tl_error_set(c->err, TL_ERR_INVALID, c->name, line, "template",
                      "template variable '@@%.*s' is not defined: expected it in the load "
                      "options' variables (talus: --var %.*s=VALUE)",
                      (int)(n > 100 ? 100 : n), s, (int)(n > 100 ? 100 : n), s);
}

/* ---- expressions ---- */

typedef struct expr {
  const tpl_ctx *c;
  const char *s, *end;
  int line;
  tl_status st;  /* error already reported */
  int bad;       /* not an expression at all (leave the braces alone) */
  int depth;
} expr;

static void skip_ws(expr *e) {
  while (e->s < e->end && (*e->s == ' ' || *e->s == '\t')) e->s++;
}

static double parse_expr(expr *e);

static double parse_primary(expr *e) {
  skip_ws(e);
  if (e->st || e->bad) return 0;
  if (e->s >= e->end) {
    e->st = tl_error_set(e->c->err, TL_ERR_PARSE, e->c->name, e->line, "template",
                         "template expression ends where a number, variable or '(' was expected");
    return 0;
  }
  if (*e->s == '(') {
    if (++e->depth > 64) {
      e->st = tl_error_set(e->c->err, TL_ERR_PARSE, e->c->name, e->line, "template",
                           "template expression nests parentheses deeper than 64");
      return 0;
    }
    e->s++;
    double v = parse_expr(e);
    skip_ws(e);
    if (e->st || e->bad) return 0;
    if (e->s >= e->end || *e->s != ')') {
      e->st = tl_error_set(e->c->err, TL_ERR_PARSE, e->c->name, e->line, "template",
                           "template expression has a '(' without its ')'");
      return 0;
    }
    e->s++;
    e->depth--;
    return v;
  }
  if (e->s + 2 < e->end && e->s[0] == '@' && e->s[1] == '@' && is_name_start(e->s[2])) {
    const char *n = e->s + 2, *p = n;
    while (p < e->end && is_name_char(*p)) p++;
    int i = find_var(e->c, n, (size_t)(p - n));
    if (i < 0) {
      e->st = undefined(e->c, e->line, n, (size_t)(p - n));
      return 0;
    }
    e->s = p;
    return e->c->values[i];
  }
  if (isdigit((unsigned char)*e->s) || *e->s == '.') {
    char buf[64];
    size_t n = 0;
    const char *p = e->s;
    while (p < e->end && n + 1 < sizeof(buf) &&
           (isdigit((unsigned char)*p) || *p == '.' || *p == 'e' || *p == 'E' ||
            ((*p == '+' || *p == '-') && n > 0 && (buf[n - 1] == 'e' || buf[n - 1] == 'E'))))
      buf[n++] = *p++;
    buf[n] = '\0';
    char *stop;
    double v = strtod(buf, &stop);
    if (stop != buf + n || n == 0) {
      e->bad = 1;
      return 0;
    }
    e->s = p;
    return v;
  }
  e->bad = 1; /* a letter, '$', ...: not an expression */
  return 0;
}

static double parse_unary(expr *e) {
  skip_ws(e);
  if (e->s < e->end && (*e->s == '-' || *e->s == '+')) {
    int neg = *e->s == '-';
    e->s++;
    if (++e->depth > 256) {
      e->st = tl_error_set(e->c->err, TL_ERR_PARSE, e->c->name, e->line, "template",
                           "template expression has more than 256 signs in a row");
      return 0;
    }
    double v = parse_unary(e);
    e->depth--;
    return neg ? -v : v;
  }
  return parse_primary(e);
}

static double parse_term(expr *e) {
  double v = parse_unary(e);
  for (;;) {
    skip_ws(e);
    if (e->st || e->bad || e->s >= e->end || (*e->s != '*' && *e->s != '/')) return v;
    char op = *e->s++;
    double r = parse_unary(e);
    if (e->st || e->bad) return 0;
    if (op == '/' && r == 0) {
      e->st = tl_error_set(e->c->err, TL_ERR_INVALID, e->c->name, e->line, "template",
                           "template expression divides by zero");
      return 0;
    }
    v = op == '*' ? v * r : v / r;
  }
}

static double parse_expr(expr *e) {
  double v = parse_term(e);
  for (;;) {
    skip_ws(e);
    if (e->st || e->bad || e->s >= e->end || (*e->s != '+' && *e->s != '-')) return v;
    char op = *e->s++;
    double r = parse_term(e);
    if (e->st || e->bad) return 0;
    v = op == '+' ? v + r : v - r;
  }
}

/* 1 if s[0..n) has only characters an expression can hold. */
static int looks_arithmetic(const char *s, size_t n) {
  int any = 0;
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    if (ch == '@' && i + 2 < n && s[i + 1] == '@' && is_name_start(s[i + 2])) {
      i += 2;
      while (i + 1 < n && is_name_char(s[i + 1])) i++;
      any = 1;
      continue;
    }
    if (isdigit((unsigned char)ch) || ch == '.') {
      any = 1;
      continue;
    }
    if (ch == 'e' || ch == 'E') { /* exponent: only right after a digit or '.' */
      if (i == 0 || !(isdigit((unsigned char)s[i - 1]) || s[i - 1] == '.')) return 0;
      continue;
    }
    if (!strchr("+-*/() \t", ch)) return 0;
  }
  return any;
}

/* ---- driver ---- */

tl_status tl_urdf_template(const char *text, size_t len, const char *name, const char *const *names,
                           const double *values, int nvar, char **out, size_t *outlen,
                           tl_error *err) {
  *out = NULL;
  *outlen = 0;
  tpl_ctx c = {name ? name : "<string>", names, values, nvar, err};
  for (int i = 0; i < nvar; i++) {
    const char *n = names ? names[i] : NULL;
    int ok = n && is_name_start(n[0]);
    for (const char *p = n; ok && *p; p++) ok = is_name_char(*p);
    if (!ok)
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "var_names",
                          "template variable %d is named '%.60s': expected a letter or '_' followed by "
                          "letters, digits or '_'", i, n ? n : "(null)");
    if (!values || !isfinite(values[i]))
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "var_values",
                          "template variable '%s' has no finite value", n);
  }
  int special = 0;
  for (size_t i = 0; i < len && !special; i++) special = text[i] == '{' || (text[i] == '@' && i + 1 < len && text[i + 1] == '@');
  if (!special) return TL_OK; /* nothing to replace: the caller keeps its text */
  out_buf b = {0};
  int line = 1;
  size_t i = 0;
  char num[40];
  while (i < len) {
    char ch = text[i];
    if (ch == '<' && i + 3 < len && memcmp(text + i, "<!--", 4) == 0) {
      size_t j = i + 4;
      while (j + 2 < len && memcmp(text + j, "-->", 3) != 0) j++;
      j = j + 2 < len ? j + 3 : len;
      for (size_t k = i; k < j; k++) line += text[k] == '\n';
      put(&b, text + i, j - i);
      i = j;
      continue;
    }
    if (ch == '@' && i + 1 < len && text[i + 1] == '@') {
      size_t j = i + 2;
      while (j < len && is_name_char(text[j])) j++;
      if (j == i + 2 || !is_name_start(text[i + 2])) {
        free(b.p);
        return tl_error_set(err, TL_ERR_PARSE, c.name, line, "template",
                            "'@@' is not followed by a variable name: expected @@Name");
      }
      int v = find_var(&c, text + i + 2, j - i - 2);
      if (v < 0) {
        free(b.p);
        return undefined(&c, line, text + i + 2, j - i - 2);
      }
      format_value(num, sizeof(num), values[v]);
      put(&b, num, strlen(num));
      i = j;
      continue;
    }
    if (ch == '{') {
      size_t j = i + 1;
      while (j < len && text[j] != '}' && text[j] != '\n' && text[j] != '{') j++;
      if (j < len && text[j] == '}' && looks_arithmetic(text + i + 1, j - i - 1)) {
        expr e = {&c, text + i + 1, text + j, line, TL_OK, 0, 0};
        double v = parse_expr(&e);
        skip_ws(&e);
        if (!e.st && !e.bad && e.s != e.end)
          e.st = tl_error_set(err, TL_ERR_PARSE, c.name, line, "template",
                              "template expression {%.*s} has extra text after a complete "
                              "expression", (int)(j - i - 1 > 80 ? 80 : j - i - 1), text + i + 1);
        if (!e.st && !e.bad && !isfinite(v))
          e.st = tl_error_set(err, TL_ERR_INVALID, c.name, line, "template",
                              "template expression {%.*s} is not finite",
                              (int)(j - i - 1 > 80 ? 80 : j - i - 1), text + i + 1);
        if (e.st) {
          free(b.p);
          return e.st;
        }
        if (!e.bad) {
          format_value(num, sizeof(num), v);
          put(&b, num, strlen(num));
          i = j + 1;
          continue;
        }
      }
    }
    line += ch == '\n';
    put(&b, &ch, 1);
    i++;
  }
  if (b.failed) {
    free(b.p);
    return tl_error_set(err, TL_ERR_MEMORY, c.name, 0, NULL, "out of memory expanding the template");
  }
  if (!b.p) put(&b, "", 0);
  if (b.failed) return tl_error_set(err, TL_ERR_MEMORY, c.name, 0, NULL, "out of memory");
  *out = b.p;
  *outlen = b.n;
  return TL_OK;
}
