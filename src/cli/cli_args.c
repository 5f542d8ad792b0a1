/* Argument parsing helpers of the talus command. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_errorf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("talus: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

int cli_model_flag(const char *arg, tl_base_type *base, int *verbose) {
  if (strcmp(arg, "--fixed-base") == 0)
    *base = TL_BASE_FIXED;
  else if (strcmp(arg, "--floating-base") == 0)
    *base = TL_BASE_FLOATING;
  else if (strcmp(arg, "--verbose") == 0 || strcmp(arg, "-v") == 0)
    *verbose = 1;
  else
    return 0;
  return 1;
}

int cli_unknown_option(const char *command, const char *arg) {
  cli_errorf("%s: unknown option '%s' (try 'talus help %s')", command, arg, command);
  return CLI_EXIT_USAGE;
}

int cli_option_value(int argc, char **argv, int *i, const char *name, const char **value) {
  const char *arg = argv[*i];
  size_t len = strlen(name);
  if (strncmp(arg, name, len) != 0) return 0;
  if (arg[len] == '=') {
    *value = arg + len + 1;
    return 1;
  }
  if (arg[len] != '\0') return 0;
  if (*i + 1 >= argc) {
    cli_errorf("option %s needs a value", name);
    return -1;
  }
  *i += 1;
  *value = argv[*i];
  return 1;
}

/* Parse one number from [text, end); 0 on success. */
static int parse_span(const char *text, const char *end, double *out) {
  char buf[128];
  size_t len = (size_t)(end - text);
  if (len == 0 || len >= sizeof(buf)) return -1;
  memcpy(buf, text, len);
  buf[len] = '\0';
  double v; /* decimal only, as in world and sweep files (talus/limits.h): "0x50" is not 80 */
  if (tl_limits_parse_number(buf, &v) != 0 || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

int cli_parse_double(const char *opt, const char *text, double *out) {
  if (parse_span(text, text + strlen(text), out) != 0) {
    cli_errorf("option %s: '%s' is not a finite decimal number", opt, text);
    return -1;
  }
  return 0;
}

static int count_items(const char *text) {
  int n = 1;
  for (const char *p = text; *p; ++p)
    if (*p == ',') ++n;
  return n;
}

int cli_parse_double_list(const char *opt, const char *text, double **out, int *n) {
  int count = count_items(text);
  double *v = malloc((size_t)count * sizeof(double));
  if (!v) {
    cli_errorf("out of memory");
    return -1;
  }
  const char *p = text;
  for (int k = 0; k < count; ++k) {
    const char *end = strchr(p, ',');
    if (!end) end = p + strlen(p);
    if (parse_span(p, end, &v[k]) != 0) {
      cli_errorf("option %s: item %d ('%.*s') is not a finite decimal number", opt, k + 1,
                 (int)(end - p), p);
      free(v);
      return -1;
    }
    p = *end ? end + 1 : end;
  }
  *out = v;
  *n = count;
  return 0;
}

/* Template variables from --var (cli_take_vars). */
enum { CLI_MAX_VARS = 64 };
static char cli_var_names[CLI_MAX_VARS][64];
static const char *cli_var_name_ptrs[CLI_MAX_VARS];
static double cli_var_values[CLI_MAX_VARS];
static int cli_nvar;

/* Keep one "NAME=VALUE"; 0 on success. */
static int add_var(const char *spec) {
  const char *eq = strchr(spec, '=');
  if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof(cli_var_names[0])) {
    cli_errorf("option --var: '%s' is not NAME=VALUE", spec);
    return -1;
  }
  if (cli_nvar == CLI_MAX_VARS) {
    cli_errorf("option --var: more than %d variables", CLI_MAX_VARS);
    return -1;
  }
  double v;
  if (cli_parse_double("--var", eq + 1, &v) != 0) return -1;
  memcpy(cli_var_names[cli_nvar], spec, (size_t)(eq - spec));
  cli_var_names[cli_nvar][eq - spec] = '\0';
  cli_var_name_ptrs[cli_nvar] = cli_var_names[cli_nvar];
  cli_var_values[cli_nvar++] = v;
  return 0;
}

int cli_take_vars(int argc, char **argv) {
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const char *value = NULL;
    int r = cli_option_value(argc, argv, &i, "--var", &value);
    if (r < 0 || (r > 0 && add_var(value) != 0)) return -1;
    if (r == 0) argv[out++] = argv[i];
  }
  argv[out] = NULL;
  return out;
}

tl_model *cli_load_model(const char *path, tl_base_type base, int verbose) {
  tl_load_options opt = tl_load_options_default();
  opt.base = base;
  opt.verbose = verbose;
  opt.var_names = cli_var_name_ptrs;
  opt.var_values = cli_var_values;
  opt.nvar = cli_nvar;
  tl_model *model = NULL;
  tl_error err;
  memset(&err, 0, sizeof(err));
  if (tl_model_load_urdf(path, &opt, &model, &err) != TL_OK) {
    if (err.message[0])
      cli_errorf("%s", err.message);
    else
      cli_errorf("%s: cannot load (%s)", path, tl_status_name(err.status));
    return NULL;
  }
  return model;
}

const char *cli_base_name(tl_base_type base) {
  switch (base) {
    case TL_BASE_FLOATING: return "floating";
    case TL_BASE_FIXED: return "fixed";
    default: return "auto";
  }
}
