/* The bit-exact JSON number (see json_number.h). */
#include "json_number.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

cJSON *tl_json_number(double v) {
  if (!isfinite(v)) return cJSON_CreateNull();
  char buf[40];
  snprintf(buf, sizeof buf, "%.15g", v);
  if (strtod(buf, NULL) != v) snprintf(buf, sizeof buf, "%.17g", v);
  return cJSON_CreateRaw(buf);
}
