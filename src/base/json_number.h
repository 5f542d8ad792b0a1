/* Internal: the one way Talus prints a double into JSON (cJSON), shared by
 * the talus command (src/cli/cli_json.c) and talus_bench (bench/bench_json.c,
 * bench/bench_batch.c), so that every JSON number either writes reads back to
 * the same double. */
#ifndef TALUS_BASE_JSON_NUMBER_H
#define TALUS_BASE_JSON_NUMBER_H

#include <cjson/cJSON.h>

/* A cJSON number item whose text reads back to exactly v (IEEE 754
 * binary64): "%.15g" when that text reads back to v (short, as people write
 * numbers: 0.001, 300, 1e-09), else "%.17g", which always does (C11 7.21.6.1
 * and IEEE 754-2008 5.12.2: 17 significant digits identify a binary64).
 * cJSON's own cJSON_CreateNumber prints "%1.15g" and falls back to "%1.17g"
 * only when its own reading disagrees, so it can lose the last bit; this
 * item is raw text and cannot. A non-finite v (NaN, +-Inf, which JSON cannot
 * spell) becomes null. Returns NULL when out of memory. */
cJSON *tl_json_number(double v);

#endif
