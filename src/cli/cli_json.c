/* JSON output helpers of the talus command (cJSON). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "../base/file.h" /* the library's output rules (libtalus) */
#include "../base/json_number.h" /* the bit-exact number (libtalus) */

int cli_json_add_string(cJSON *obj, const char *key, const char *value) {
  cJSON *item = value ? cJSON_CreateString(value) : cJSON_CreateNull();
  if (!item) return -1;
  if (!cJSON_AddItemToObject(obj, key, item)) {
    cJSON_Delete(item);
    return -1;
  }
  return 0;
}

cJSON *cli_json_number(double v) { return tl_json_number(v); }

int cli_json_add_number(cJSON *obj, const char *key, double v) {
  cJSON *item = cli_json_number(v);
  if (!item) return -1;
  if (!cJSON_AddItemToObject(obj, key, item)) {
    cJSON_Delete(item);
    return -1;
  }
  return 0;
}

int cli_json_add_numbers(cJSON *obj, const char *key, const double *v, int n) {
  cJSON *arr = cJSON_AddArrayToObject(obj, key);
  if (!arr) return -1;
  for (int k = 0; k < n; ++k) {
    cJSON *item = cli_json_number(v[k]);
    if (!item || !cJSON_AddItemToArray(arr, item)) {
      cJSON_Delete(item);
      return -1;
    }
  }
  return 0;
}

/* The text of root (cJSON_Print; the caller cJSON_free's it), root freed;
 * NULL after reporting the error. */
static char *json_text_and_free(cJSON *root) {
  if (!root) {
    cli_errorf("out of memory while building JSON");
    return NULL;
  }
  char *text = cJSON_Print(root);
  cJSON_Delete(root);
  if (!text) cli_errorf("out of memory while printing JSON");
  return text;
}

int cli_json_print_and_free(cJSON *root) {
  char *text = json_text_and_free(root);
  if (!text) return CLI_EXIT_FAIL;
  fputs(text, stdout);
  fputc('\n', stdout);
  cJSON_free(text);
  return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

int cli_json_write_and_free(cJSON *root, const char *path) {
  if (!path) return cli_json_print_and_free(root);
  char *text = json_text_and_free(root);
  if (!text) return CLI_EXIT_FAIL;
  tl_out o;
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_status st = tl_out_open(&o, path, "the JSON file", &err);
  if (st == TL_OK) st = tl_out_commit(&o, fputs(text, o.f) >= 0 && fputc('\n', o.f) != EOF, &err);
  cJSON_free(text);
  if (st != TL_OK) {
    cli_errorf("%s", err.message);
    return CLI_EXIT_FAIL;
  }
  return CLI_EXIT_OK;
}

/* Line and column (1-based) of byte `at` of text. */
static void text_position(const char *text, const char *at, int *line, int *col) {
  *line = 1;
  *col = 1;
  for (const char *p = text; p < at && *p; ++p) {
    if (*p == '\n') {
      ++*line;
      *col = 1;
    } else {
      ++*col;
    }
  }
}

/* JSON files read back (reports, baselines) are small; 256 MB bounds the read. */
#define CLI_JSON_MAX_BYTES ((size_t)256 << 20)

cJSON *cli_json_read_file(const char *path, const char *what) {
  char *text = NULL;
  size_t len = 0;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (tl_read_file(path, CLI_JSON_MAX_BYTES, &text, &len, &err) != TL_OK) {
    cli_errorf("%s (%s)", err.message, what);
    return NULL;
  }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (!root) {
    int line = 1, col = 1;
    size_t n = strlen(text);
    if (end && end >= text && end <= text + n) text_position(text, end, &line, &col);
    /* what follows the error, up to 20 characters on its line */
    const char *near = end && end >= text && end < text + n ? end : "";
    int near_len = (int)strcspn(near, "\r\n");
    if (near_len > 20) near_len = 20;
    if (n == 0 || strspn(text, " \t\r\n") == n)
      cli_errorf("%s: %s is empty (expected JSON)", path, what);
    else if (near_len == 0)
      cli_errorf("%s:%d:%d: %s is not valid JSON (unexpected end of %s)", path, line, col, what,
                 near[0] ? "line" : "file");
    else
      cli_errorf("%s:%d:%d: %s is not valid JSON (error near '%.*s')", path, line, col, what,
                 near_len, near);
    free(text);
    return NULL;
  }
  free(text);
  return root;
}
