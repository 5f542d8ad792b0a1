/* Progress bar of `talus simulate` on stderr (terminals only, <= 20 redraws/s). */
#define _POSIX_C_SOURCE 200809L

#include <time.h>
#include <unistd.h>

#include "cli_sim.h"

#define PROGRESS_PERIOD 0.05 /* s between redraws */
#define PROGRESS_WIDTH 40    /* characters of the bar */

double cli_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_progress_begin(cli_progress *p) {
  p->enabled = isatty(STDERR_FILENO);
  p->last = cli_now();
  p->drawn = 0;
}

static void progress_draw(long long done, long long total, double sim_time) {
  double frac = total > 0 ? (double)done / (double)total : 1.0;
  int fill = (int)(frac * PROGRESS_WIDTH);
  char bar[PROGRESS_WIDTH + 1];
  for (int k = 0; k < PROGRESS_WIDTH; ++k) bar[k] = k < fill ? '#' : '.';
  bar[PROGRESS_WIDTH] = '\0';
  fprintf(stderr, "\r[%s] %5.1f%%  t = %.3f s", bar, 100.0 * frac, sim_time);
  fflush(stderr);
}

void cli_progress_update(cli_progress *p, long long done, long long total, double sim_time) {
  if (!p->enabled) return;
  double now = cli_now();
  if (now - p->last < PROGRESS_PERIOD) return;
  p->last = now;
  p->drawn = 1;
  progress_draw(done, total, sim_time);
}

void cli_progress_end(cli_progress *p) {
  if (!p->enabled || !p->drawn) return;
  fputs("\r\033[K", stderr); /* erase the bar line */
  fflush(stderr);
}
