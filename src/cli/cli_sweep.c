/* `talus sweep ROBOT|SPEC.xml [options]`: dynamics-randomization sweeps
 * (talus/sweep.h, docs/sweeps.md) on the threads of one machine, or under
 * mpirun on the ranks of many (rank 0 writes the files and reports). The
 * options are the sweep's settings (tl_sweep_set), applied after a sweep
 * file's; a progress bar on stderr; Ctrl-C (SIGINT) or SIGTERM stops the run
 * keeping every finished row, --resume completes it. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_sim.h"
#include "../base/file.h" /* the library's output rules (libtalus) */
#include "talus/sweep.h"

extern const unsigned char cli_sweep_plot_script[];
extern const size_t cli_sweep_plot_script_len;

#define SWEEP_DEFAULT_OUT "sweep.csv"
#define SWEEP_EXIT_INTERRUPTED 130

typedef struct sweep_cli {
  int rank, size, mpi;
  int resume, quiet, threads, force;
  const char *out, *summary, *plot;
  char summary_buf[4096];
  int bar_drawn;
} sweep_cli;

static volatile sig_atomic_t interrupted_flag;

static void on_signal(int sig) {
  interrupted_flag = 1;
  signal(sig, SIG_DFL); /* a second Ctrl-C kills at once */
}

static int interrupted(void *ctx) {
  (void)ctx;
  return interrupted_flag != 0;
}

/* Errors: rank 0 prints (every rank has the same settings, hence the same message). */
static int say(const sweep_cli *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int say(const sweep_cli *c, int code, const char *fmt, ...) {
  if (c->rank != 0) return code;
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  cli_errorf("sweep: %s", msg);
  return code;
}

/* ------------------------------------------------------------ progress */

static void fmt_time(double s, char *buf, size_t cap) {
  if (!isfinite(s)) {
    snprintf(buf, cap, "--:--");
    return;
  }
  long t = lround(s);
  if (t >= 3600) snprintf(buf, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else snprintf(buf, cap, "%ld:%02ld", t / 60, t % 60);
}

static void progress(void *ctx, const tl_sweep_progress *p) {
  sweep_cli *c = ctx;
  if (c->quiet || c->rank != 0 || !isatty(STDERR_FILENO)) return;
  enum { W = 30 };
  double frac = p->total > 0 ? (double)p->done / (double)p->total : 1.0;
  char bar[W + 1], eta[32];
  for (int k = 0; k < W; ++k) bar[k] = k < (int)(frac * W) ? '#' : '.';
  bar[W] = '\0';
  fmt_time(p->eta, eta, sizeof eta);
  fprintf(stderr, "\r[%s] %ld/%ld  %.1f samples/s  ETA %s  failed %ld", bar, p->done, p->total, p->rate, eta, p->failed);
  if (p->resumed) fprintf(stderr, "  (%ld resumed)", p->resumed);
  fprintf(stderr, "  workers %d\033[K", p->workers);
  fflush(stderr);
  c->bar_drawn = 1;
}

static void progress_end(sweep_cli *c) {
  if (!c->bar_drawn) return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
  c->bar_drawn = 0;
}

/* ------------------------------------------------------------ arguments */

/* Options whose value is a setting of the same name (dashes for underscores). */
static const char *const valued[] = {"--controller", "--duration", "--dt", "--samples", "--seed", "--param",
                                     "--fall-height", "--fall-tilt", "--q", "--var", "--kp", "--kd",
                                     "--ground-friction", "--terrain-size", "--terrain-spacing", "--worst",
                                     "--out", "--summary", "--plot", "--threads", NULL};

static int set(tl_sweep *sw, const sweep_cli *c, const char *key, const char *value) {
  tl_error err;
  memset(&err, 0, sizeof err);
  if (tl_sweep_set(sw, key, value, &err) == TL_OK) return 0;
  say(c, CLI_EXIT_USAGE, "%s", err.message);
  return -1;
}

/* Apply argv's options to sw (after the sweep file, so they override it). */
static int parse_options(int argc, char **argv, tl_sweep *sw, sweep_cli *c) {
  for (int i = 2; i < argc; ++i) {
    const char *arg = argv[i], *v = NULL;
    if (strcmp(arg, "--resume") == 0) {
      c->resume = 1;
      continue;
    }
    if (strcmp(arg, "--quiet") == 0) {
      c->quiet = 1;
      continue;
    }
    if (strcmp(arg, "--force") == 0) {
      c->force = 1;
      continue;
    }
    if (strcmp(arg, "--fixed-base") == 0 || strcmp(arg, "--floating-base") == 0) {
      if (set(sw, c, "base", arg[2] == 'f' && arg[3] == 'i' ? "fixed" : "floating") != 0) return -1;
      continue;
    }
    int matched = 0;
    for (int k = 0; valued[k] && !matched; ++k) {
      int r = cli_option_value(argc, argv, &i, valued[k], &v);
      if (r < 0) return -1;
      if (r == 0) continue;
      matched = 1;
      if (set(sw, c, valued[k] + 2, v) != 0) return -1;
    }
    if (matched) continue;
    say(c, CLI_EXIT_USAGE, "unknown option '%s' (talus sweep --help)", arg);
    return -1;
  }
  return 0;
}

/* 0 if path may be written by this run: the output rules of base/file.h (a device or FIFO is
 * written through, a symlink followed, a regular file replaced), and an existing regular file only
 * with --force, or with --resume (which completes it); else -1 after a message. */
static int may_write(const sweep_cli *c, const char *path, const char *option) {
  tl_error err;
  memset(&err, 0, sizeof err);
  if (tl_out_check(path, option, &err) != TL_OK) return say(c, CLI_EXIT_FAIL, "%s", err.message), -1;
  struct stat sb;
  if (!c->force && !c->resume && stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
    return say(c, CLI_EXIT_FAIL, "%s '%s' exists and this run did not write it: refused (--force overwrites it, "
               "--resume completes the sweep whose rows it holds)", option, path), -1;
  return 0;
}

/* Output settings after the file and the options. */
static int outputs(tl_sweep *sw, sweep_cli *c) {
  c->out = tl_sweep_get(sw, "out") ? tl_sweep_get(sw, "out") : SWEEP_DEFAULT_OUT;
  c->plot = tl_sweep_get(sw, "plot");
  c->summary = tl_sweep_get(sw, "summary");
  if (!c->summary) {
    size_t n = strlen(c->out);
    int csv = n > 4 && strcmp(c->out + n - 4, ".csv") == 0;
    snprintf(c->summary_buf, sizeof c->summary_buf, "%.*s.json", (int)(csv ? n - 4 : n), c->out);
    c->summary = c->summary_buf;
  }
  const char *t = tl_sweep_get(sw, "threads");
  c->threads = t ? atoi(t) : 0;
  if (c->rank != 0) return 0;
  /* the outputs can be written (checked before any sample runs, creating nothing) */
  const char *paths[] = {c->out, c->summary, c->plot}, *names[] = {"--out", "--summary", "--plot"};
  for (int i = 0; i < 3; ++i)
    if (paths[i] && may_write(c, paths[i], names[i]) != 0) return -1;
  if (c->plot && cli_plot_check(c->plot) != CLI_EXIT_OK) return -1;
  return 0;
}

/* ------------------------------------------------------------ report */

static void report(const sweep_cli *c, const tl_sweep *sw, const tl_sweep_results *r) {
  long n = tl_sweep_results_count(r), counts[4] = {0, 0, 0, 0};
  for (long i = 0; i < n; ++i) counts[tl_sweep_results_row(r, i)->status]++;
  double lo, hi;
  tl_sweep_wilson(counts[TL_SWEEP_OK], n, 1.959963984540054, &lo, &hi);
  printf("sweep          %s, %ld samples, seed %llu, spec %016llx\n", tl_sweep_get(sw, "robot"), tl_sweep_nsample(sw),
         (unsigned long long)tl_sweep_seed(sw), (unsigned long long)tl_sweep_hash(sw));
  printf("rows           %ld (%ld run now)\n", n, tl_sweep_results_ran(r));
  printf("status         ok %ld, fell %ld, diverged %ld, error %ld\n", counts[0], counts[1], counts[2], counts[3]);
  if (n) printf("success        %.4g (Wilson 95%% interval %.4g .. %.4g)\n", (double)counts[0] / (double)n, lo, hi);
  printf("files          %s, %s%s%s\n", c->out, c->summary, c->plot ? ", " : "", c->plot ? c->plot : "");
}

static int plot(const sweep_cli *c, const tl_sweep *sw) {
  char title[1024];
  snprintf(title, sizeof title, "%s: %ld samples", tl_sweep_get(sw, "robot"), tl_sweep_nsample(sw));
  char *args[] = {(char *)c->out, (char *)c->plot, title};
  return cli_plot_run_script(cli_sweep_plot_script, cli_sweep_plot_script_len, "sweep_plot.py", args, 3, 1);
}

/* ------------------------------------------------------------ the command */

static int run(int argc, char **argv, sweep_cli *c, tl_sweep *sw) {
  tl_error err;
  memset(&err, 0, sizeof err);
  const char *first = argv[1];
  int file = tl_sweep_is_file(first);
  if (file < 0) {
    struct stat sb;
    int e = stat(first, &sb) != 0 ? errno : 0;
    return say(c, CLI_EXIT_FAIL, "cannot read '%s': %s", first,
               e ? strerror(e) : S_ISREG(sb.st_mode) ? "unreadable" : "not a regular file");
  }
  if (file && tl_sweep_load_file(sw, first, &err) != TL_OK) return say(c, CLI_EXIT_USAGE, "%s", err.message);
  if (!file && set(sw, c, "robot", first) != 0) return CLI_EXIT_USAGE;
  if (parse_options(argc, argv, sw, c) != 0) return CLI_EXIT_USAGE;
  int ok = outputs(sw, c) == 0; /* rank 0 checks the output paths */
  if (c->mpi) ok = tl_sweep_mpi_agree(ok);
  if (!ok) return CLI_EXIT_FAIL;
  tl_status st = tl_sweep_prepare(sw, &err);
  if (c->mpi) {
    /* rank 0 reports its own error; another rank only when rank 0 was fine */
    int rank0_ok = tl_sweep_mpi_agree(c->rank == 0 ? st == TL_OK : 1);
    ok = tl_sweep_mpi_agree(st == TL_OK);
    if (st != TL_OK && (c->rank == 0 || rank0_ok)) cli_errorf("sweep: rank %d: %s", c->rank, err.message);
  } else {
    ok = st == TL_OK;
    if (!ok) cli_errorf("sweep: %s", err.message);
  }
  if (!ok) return st == TL_ERR_ARGUMENT || st == TL_ERR_INVALID || st == TL_OK ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  tl_sweep_run_options opt = tl_sweep_run_options_default();
  opt.nthread = c->threads;
  opt.csv = c->out;
  opt.resume = c->resume;
  opt.progress = progress;
  opt.interrupted = interrupted;
  opt.ctx = c;
  tl_sweep_results *res = NULL;
#ifdef TALUS_HAVE_MPI
  st = c->mpi ? tl_sweep_run_mpi(sw, &opt, &res, &err) : tl_sweep_run(sw, &opt, &res, &err);
#else
  st = tl_sweep_run(sw, &opt, &res, &err);
#endif
  progress_end(c);
  if (st != TL_OK) return say(c, CLI_EXIT_FAIL, "%s", err.message);
  if (c->rank != 0) return CLI_EXIT_OK;
  int rc = CLI_EXIT_OK;
  if (tl_sweep_write_summary(sw, res, c->summary, &err) != TL_OK) rc = say(c, CLI_EXIT_FAIL, "%s", err.message);
  report(c, sw, res);
  if (c->plot && plot(c, sw) != CLI_EXIT_OK) rc = CLI_EXIT_FAIL;
  if (!tl_sweep_results_complete(res)) {
    cli_errorf("sweep: interrupted: %ld of %ld samples have a row in %s; run the same command with --resume to "
               "finish", tl_sweep_results_count(res), tl_sweep_nsample(sw), c->out);
    rc = SWEEP_EXIT_INTERRUPTED;
  }
  tl_sweep_results_free(res);
  return rc;
}

int cli_sweep(int argc, char **argv) {
  sweep_cli c;
  memset(&c, 0, sizeof c);
  c.size = 1;
  if (tl_sweep_mpi_launched()) {
#ifdef TALUS_HAVE_MPI
    tl_error err;
    memset(&err, 0, sizeof err);
    if (tl_sweep_mpi_init(&argc, &argv, &c.rank, &c.size, &err) != TL_OK) {
      cli_errorf("sweep: %s", err.message);
      tl_sweep_mpi_finalize();
      return CLI_EXIT_FAIL;
    }
    c.mpi = 1;
#else
    cli_errorf("sweep: started by mpirun, but this talus was built without MPI (Debian: libopenmpi-dev; rebuild), "
               "so every rank would run the whole sweep: stopping");
    return CLI_EXIT_FAIL;
#endif
  }
  int rc;
  tl_sweep *sw = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    if (c.rank == 0) fputs(cli_usage_sweep, stdout);
    rc = CLI_EXIT_OK;
  } else if (argc < 2 || argv[1][0] == '-') {
    rc = say(&c, CLI_EXIT_USAGE, "a URDF, world file or sweep file comes first (talus sweep --help)");
  } else if (tl_sweep_create(NULL, &sw, &err) != TL_OK) {
    rc = say(&c, CLI_EXIT_FAIL, "%s", err.message);
  } else {
    for (int i = 2; i < argc; ++i)
      if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
        if (c.rank == 0) fputs(cli_usage_sweep, stdout);
        tl_sweep_free(sw);
        if (c.mpi) tl_sweep_mpi_finalize();
        return CLI_EXIT_OK;
      }
    rc = run(argc, argv, &c, sw);
  }
  tl_sweep_free(sw);
  if (c.mpi) tl_sweep_mpi_finalize();
  return rc;
}
