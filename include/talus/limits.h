/* Talus: the one validator of each quantity that several inputs set (the
 * command line, world and sweep files, the C and Python APIs), so a value
 * refused on one path is refused on every path with the same rule.
 *
 *   time step        TL_DT_MIN <= dt <= TL_DT_MAX seconds (tl_limits_check_timestep;
 *                    tl_world_set_timestep applies it)
 *   duration, steps  a finite duration >= 0 s, and duration / dt rounded to
 *                    at most TL_MAX_STEPS steps (tl_limits_steps_for_duration)
 *   grid size        size / spacing + 1 points per side, 2 .. max_points,
 *                    computed in double before any integer conversion
 *                    (tl_limits_grid_points)
 *   numbers in text  decimal only (tl_limits_parse_number): no hexadecimal, no
 *                    "inf"/"nan", nothing after the number */
#ifndef TALUS_LIMITS_H
#define TALUS_LIMITS_H

#include "talus/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TL_DT_MIN 1e-9            /* s: below it a second of simulation is > 1e9 steps */
#define TL_DT_MAX 1.0             /* s */
#define TL_MAX_STEPS 1000000000000LL /* 1e12 steps: years of computing */

/* TL_OK if dt is a finite number in [TL_DT_MIN, TL_DT_MAX] s, else
 * TL_ERR_ARGUMENT naming "dt" and the range. */
tl_status tl_limits_check_timestep(double dt, tl_error *err);

/* *steps = llround(duration / dt) for a finite duration >= 0 s and a valid
 * dt (tl_limits_check_timestep); TL_ERR_ARGUMENT if duration is negative or not
 * finite, or the step count exceeds TL_MAX_STEPS (no integer overflow: the
 * ratio is checked in double first). */
tl_status tl_limits_steps_for_duration(double duration, double dt, long long *steps, tl_error *err);

/* *n = round(size / spacing) + 1 grid points per side for finite size > 0
 * and spacing > 0 (m), refused (TL_ERR_ARGUMENT naming `what`) unless
 * 2 <= *n <= max_points; the ratio is checked in double before it becomes an
 * int, so 2^32 + 100 points never wraps to 101. */
tl_status tl_limits_grid_points(double size, double spacing, int max_points, const char *what, int *n, tl_error *err);

/* Parse the whole of text as one decimal number (optional sign, digits,
 * '.', exponent; surrounding white space allowed): hexadecimal ("0x50"),
 * "inf", "nan" and trailing characters are refused. 0 and *out set, or -1. */
int tl_limits_parse_number(const char *text, double *out);

/* Deprecated: the names before issue 22 (one prefix per header: tl_limits_*). */
#define tl_check_timestep tl_limits_check_timestep
#define tl_steps_for_duration tl_limits_steps_for_duration
#define tl_grid_points tl_limits_grid_points
#define tl_parse_number tl_limits_parse_number

#ifdef __cplusplus
}
#endif
#endif
