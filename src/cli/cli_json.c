/* JSON output helpers of the talus command (cJSON). */
#include <math.h>
#include <stdlib.h>

#include "cli.h"

int cli_json_add_string(cJSON *obj, const char *key, const char *value) {
  cJSON *item = value ? cJSON_CreateString(value) : cJSON_CreateNull();
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
    cJSON *item = isfinite(v[k]) ? cJSON_CreateNumber(v[k]) : cJSON_CreateNull();
    if (!item || !cJSON_AddItemToArray(arr, item)) {
      cJSON_Delete(item);
      return -1;
    }
  }
  return 0;
}

int cli_json_print_and_free(cJSON *root) {
  if (!root) {
    cli_errorf("out of memory while building JSON");
    return CLI_EXIT_FAIL;
  }
  char *text = cJSON_Print(root);
  cJSON_Delete(root);
  if (!text) {
    cli_errorf("out of memory while printing JSON");
    return CLI_EXIT_FAIL;
  }
  fputs(text, stdout);
  fputc('\n', stdout);
  cJSON_free(text);
  return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}
