/* Guards: src/cli/cli_simulate.c, src/cli/cli_sim_*.c (`talus simulate --json`), src/cli/cli_info.c
 * (`talus info --json`), src/cli/cli_json.c, src/cli/cli_usage.c (exit codes), src/cli/cli_bench.c
 * (`talus bench --help`). */
/* The `talus` command line, run as a separate process (popen).
 *
 *   talus simulate --duration 2 --json                 (default robot)
 *   talus simulate SHARED/anymal_c/urdf/anymal.urdf --duration 10 --json
 *     exit 0; JSON parsed with cJSON: nan_detected false,
 *     base_height.max - min < 0.02 m, max_penetration_m < 0.005 m,
 *     contact_links non-empty and every key contains "FOOT",
 *     steps == duration / dt, final_gc has gc_dim finite entries,
 *     final_gc[2] == base_height.final, dof / gc_dim 18 / 19.
 *   talus info URDF --json on every URDF under SHARED (found recursively):
 *     exit 0, dof and gc_dim as in shared/robots/README.md (floating robots
 *     with the default base, which must come out "floating"; arms, the
 *     pendulums and the cart-pole with --fixed-base); every table row must
 *     match at least one file (double_pendulum: 3).
 *   Exit codes: a missing URDF -> 1 with a message naming the file (info and
 *   simulate); an unknown option -> 2 (info, simulate, top level); an
 *   unknown command -> 2.
 *   talus bench --help: exit 0, talus_bench's usage on stdout (it runs the
 *   talus_bench beside the talus binary); talus help bench: exit 0; a copy
 *   of talus in a folder without talus_bench: bench --help -> 1 with a
 *   message naming the missing path.
 *
 * Usage: test_cli TALUS_BINARY [SHARED_ROBOTS_DIR]
 *   ($TALUS_SHARED/robots overrides SHARED_ROBOTS_DIR). Without the shared
 *   corpus the ANYmal run and the info table are SKIPPED (counted). */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "test_util.h"

static const char *talus_bin;
static char err_path[] = "/tmp/talus_test_cli_XXXXXX";

typedef struct run_result {
  int exit_code; /* -1: did not exit normally */
  char *out;     /* stdout */
  char *err;     /* stderr */
} run_result;

static char *slurp_stream(FILE *f) {
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  if (!buf) exit(2);
  for (;;) {
    if (n + 4096 > cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      if (!buf) exit(2);
    }
    size_t r = fread(buf + n, 1, cap - n - 1, f);
    n += r;
    if (r == 0) break;
  }
  buf[n] = '\0';
  return buf;
}

/* Run `talus ARGS` (ARGS already shell-quoted); stdout through the pipe,
 * stderr through a temporary file. */
static run_result run(const char *args) {
  run_result r = {-1, NULL, NULL};
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "'%s' %s 2>'%s'", talus_bin, args, err_path);
  FILE *p = popen(cmd, "r");
  if (!p) {
    r.out = calloc(1, 1);
    r.err = calloc(1, 1);
    return r;
  }
  r.out = slurp_stream(p);
  int st = pclose(p);
  if (st != -1 && WIFEXITED(st)) r.exit_code = WEXITSTATUS(st);
  FILE *e = fopen(err_path, "r");
  r.err = e ? slurp_stream(e) : calloc(1, 1);
  if (e) fclose(e);
  return r;
}
static void run_free(run_result *r) {
  free(r->out);
  free(r->err);
}

static const cJSON *jget(const cJSON *o, const char *k) {
  return cJSON_GetObjectItemCaseSensitive(o, k);
}
static double jnum(const cJSON *o, const char *k) {
  const cJSON *it = jget(o, k);
  return cJSON_IsNumber(it) ? it->valuedouble : NAN;
}

/* ------------------------------------------------------------ simulate */

/* 1 if s contains "foot" in any case. */
static int names_foot(const char *s) {
  for (; s && *s; s++)
    if (strncasecmp(s, "foot", 4) == 0) return 1;
  return 0;
}

/* `talus simulate ... --json` of a standing quadruped: exit 0, no NaN, base
 * height band < 2 cm and roll / pitch < 0.2 rad over the last 80%, no joint
 * coordinate outside its limits at any step (the default configuration lies
 * inside them, issue 11), penetration < 5 mm, only feet touch the ground. */
static void check_simulate(const char *label, const char *args, double duration, double dt) {
  run_result r = run(args);
  printf("%s: talus %s -> exit %d\n", label, args, r.exit_code);
  if (!TL_CHECK(r.exit_code == 0, "%s: exit code %d, stderr: %s", label, r.exit_code, r.err)) {
    run_free(&r);
    return;
  }
  cJSON *j = cJSON_Parse(r.out);
  if (!TL_CHECK(j != NULL, "%s: stdout is not JSON: %.300s", label, r.out)) {
    run_free(&r);
    return;
  }
  const cJSON *nan = jget(j, "nan_detected");
  TL_CHECK(cJSON_IsFalse(nan), "%s: nan_detected is not false", label);
  const cJSON *bh = jget(j, "base_height");
  double hmin = jnum(bh, "min"), hmax = jnum(bh, "max"), hfin = jnum(bh, "final");
  double pen = jnum(j, "max_penetration_m");
  TL_CHECK(hmax - hmin < 0.02, "%s: base_height max - min = %.4g m (min %g, max %g)", label,
           hmax - hmin, hmin, hmax);
  TL_CHECK(hmin > 0.2, "%s: base_height.min %.4g m: the robot fell", label, hmin);
  TL_CHECK(pen < 0.005, "%s: max_penetration_m %.4g", label, pen);
  double rp = jnum(j, "max_roll_pitch_rad"), lim = jnum(j, "max_limit_violation");
  TL_CHECK(rp < 0.2, "%s: max_roll_pitch_rad %.4g: the robot tipped", label, rp);
  TL_CHECK(lim <= 1e-6, "%s: a joint was %.4g outside its limits", label, lim);
  const cJSON *links = jget(j, "contact_links"), *it;
  int nlinks = 0, nbad = 0;
  char names[512] = "";
  cJSON_ArrayForEach(it, links) {
    nlinks++;
    if (!it->string || !names_foot(it->string)) nbad++;
    size_t len = strlen(names);
    snprintf(names + len, sizeof names - len, "%s%s=%.3f", len ? " " : "",
             it->string ? it->string : "?", cJSON_IsNumber(it) ? it->valuedouble : NAN);
  }
  TL_CHECK(cJSON_IsObject(links) && nlinks >= 4 && nbad == 0,
           "%s: contact_links {%s}: want >= 4 links, all named *foot*", label, names);
  double steps = jnum(j, "steps"), jdt = jnum(j, "dt");
  TL_CHECK(jdt == dt, "%s: dt %g, asked %g", label, jdt, dt);
  TL_CHECK(steps == (double)lround(duration / dt), "%s: steps %.0f, duration / dt = %ld", label,
           steps, lround(duration / dt));
  double gc_dim = jnum(j, "gc_dim"), dof = jnum(j, "dof");
  TL_CHECK(gc_dim == 19 && dof == 18, "%s: gc_dim %g dof %g, want 19 18", label, gc_dim, dof);
  const cJSON *gc = jget(j, "final_gc");
  int ngc = cJSON_IsArray(gc) ? cJSON_GetArraySize(gc) : -1, finite = 1;
  cJSON_ArrayForEach(it, gc) finite &= cJSON_IsNumber(it) && isfinite(it->valuedouble);
  TL_CHECK(ngc == (int)gc_dim && finite, "%s: final_gc has %d entries (finite %d), gc_dim %g", label,
           ngc, finite, gc_dim);
  if (ngc >= 3)
    TL_CHECK(fabs(cJSON_GetArrayItem(gc, 2)->valuedouble - hfin) <= 1e-12 * fabs(hfin),
             "%s: final_gc[2] %.17g != base_height.final %.17g", label,
             cJSON_GetArrayItem(gc, 2)->valuedouble, hfin);
  printf("%s: steps %.0f, base height [%.6f, %.6f] (range %.2e), roll/pitch %.3g rad, limit "
         "violation %.2g, max penetration %.2e, contact_links {%s}\n",
         label, steps, hmin, hmax, hmax - hmin, rp, lim, pen, names);
  cJSON_Delete(j);
  run_free(&r);
}

/* ---------------------------------------------------------------- info */

typedef struct dof_row {
  const char *match; /* substring of the path below the shared folder */
  int fixed;         /* 1: --fixed-base; 0: default base, must be floating */
  int dof, gc_dim;
  int seen;
} dof_row;

static dof_row table[] = {
    {"anymal_c/urdf/anymal.urdf", 0, 18, 19, 0},
    {"anymal_c/urdf/anymal_c_nolimit.urdf", 0, 18, 19, 0},
    {"hyq/", 0, 18, 19, 0},
    {"solo12/", 0, 18, 19, 0},
    {"talos_full_v2.urdf", 0, 50, 51, 0},
    {"talos_reduced.urdf", 0, 38, 39, 0},
    {"husky/", 0, 10, 11, 0},
    {"deepmimic_humanoid/", 0, 34, 43, 0}, /* 8 ball joints: 4 coordinates, 3 DOF each */
    {"panda/", 1, 9, 9, 0},
    {"ur5/", 1, 6, 6, 0},
    {"kuka_iiwa/", 1, 7, 7, 0},
    {"double_pendulum/", 1, 2, 2, 0},
    {"cartpole/", 1, 2, 2, 0},
};
#define NROW ((int)(sizeof table / sizeof table[0]))

static void find_urdfs(const char *dir, char ***list, int *n, int depth) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) continue;
    struct stat sb;
    if (stat(path, &sb) != 0) continue;
    size_t len = strlen(e->d_name);
    if (S_ISDIR(sb.st_mode) && depth < 8) {
      find_urdfs(path, list, n, depth + 1);
    } else if (S_ISREG(sb.st_mode) && len > 5 && strcmp(e->d_name + len - 5, ".urdf") == 0) {
      *list = realloc(*list, (size_t)(*n + 1) * sizeof **list);
      if (!*list) exit(2);
      (*list)[*n] = strdup(path);
      if (!(*list)[*n]) exit(2);
      ++*n;
    }
  }
  closedir(d);
}
static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_info(const char *shared) {
  char **files = NULL;
  int n = 0;
  find_urdfs(shared, &files, &n, 0);
  qsort(files, (size_t)n, sizeof *files, cmp_str);
  TL_CHECK(n > 0, "no URDF files under %s", shared);
  for (int i = 0; i < n; i++) {
    const char *rel = files[i] + strlen(shared) + 1;
    dof_row *row = NULL;
    for (int k = 0; k < NROW && !row; k++)
      if (strstr(rel, table[k].match)) row = &table[k];
    char args[4608];
    snprintf(args, sizeof args, "info '%s' --json%s", files[i], row && row->fixed ? " --fixed-base" : "");
    run_result r = run(args);
    cJSON *j = r.exit_code == 0 ? cJSON_Parse(r.out) : NULL;
    double dof = jnum(j, "dof"), gc = jnum(j, "gc_dim");
    const cJSON *base = jget(j, "base");
    const char *b = cJSON_IsString(base) ? base->valuestring : "?";
    printf("info %-52s %-14s -> exit %d, base %-8s dof %3g gc_dim %3g", rel,
           row && row->fixed ? "--fixed-base" : "", r.exit_code, b, dof, gc);
    if (TL_CHECK(r.exit_code == 0 && j, "info %s: exit %d, stderr: %s", rel, r.exit_code, r.err)) {
      if (row) {
        row->seen++;
        printf("  (README: %d / %d)\n", row->dof, row->gc_dim);
        TL_CHECK(dof == row->dof && gc == row->gc_dim, "info %s: dof %g gc_dim %g, README table %d %d",
                 rel, dof, gc, row->dof, row->gc_dim);
        TL_CHECK(strcmp(b, row->fixed ? "fixed" : "floating") == 0, "info %s: base '%s', want %s", rel,
                 b, row->fixed ? "fixed" : "floating");
      } else {
        printf("  (not in the README table)\n");
        TL_CHECK(dof > 0 && gc >= dof, "info %s: dof %g gc_dim %g", rel, dof, gc);
      }
      /* the joint list agrees with nbody */
      const cJSON *joints = jget(j, "joints");
      TL_CHECK(cJSON_IsArray(joints) && cJSON_GetArraySize(joints) == (int)jnum(j, "nbody"),
               "info %s: %d joints listed, nbody %g", rel,
               cJSON_IsArray(joints) ? cJSON_GetArraySize(joints) : -1, jnum(j, "nbody"));
    } else {
      printf("\n");
    }
    cJSON_Delete(j);
    run_free(&r);
    free(files[i]);
  }
  free(files);
  for (int k = 0; k < NROW; k++)
    TL_CHECK(table[k].seen >= (strcmp(table[k].match, "double_pendulum/") == 0 ? 3 : 1),
             "README robot '%s' found %d times under %s", table[k].match, table[k].seen, shared);
}

/* ----------------------------------------------------------- exit codes */

static void check_exit(const char *args, int want, const char *must_mention) {
  run_result r = run(args);
  char *nl = strchr(r.err, '\n');
  printf("talus %s -> exit %d: %.*s\n", args, r.exit_code, nl ? (int)(nl - r.err) : (int)strlen(r.err),
         r.err);
  TL_CHECK(r.exit_code == want, "talus %s: exit %d, want %d (stderr: %s)", args, r.exit_code, want,
           r.err);
  TL_CHECK(r.err[0] != '\0', "talus %s: no message on stderr", args);
  if (must_mention)
    TL_CHECK(strstr(r.err, must_mention) != NULL, "talus %s: message does not name '%s': %s", args,
             must_mention, r.err);
  run_free(&r);
}

/* --------------------------------------------------------------- bench */

/* Copy the file src to dst with mode 0755; 0 on success. */
static int copy_executable(const char *src, const char *dst) {
  FILE *in = fopen(src, "rb"), *out = in ? fopen(dst, "wb") : NULL;
  int ok = in && out;
  char buf[65536];
  size_t n;
  while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, out) == n;
  if (in) fclose(in);
  if (out && fclose(out) != 0) ok = 0;
  return ok && chmod(dst, 0755) == 0 ? 0 : -1;
}

static void check_bench(void) {
  run_result r = run("bench --help");
  printf("talus bench --help -> exit %d, %zu bytes on stdout\n", r.exit_code, strlen(r.out));
  TL_CHECK(r.exit_code == 0, "talus bench --help: exit %d (stderr: %s)", r.exit_code, r.err);
  TL_CHECK(strstr(r.out, "talus_bench") && strstr(r.out, "--reps") && strstr(r.out, "--json"),
           "talus bench --help: talus_bench's usage expected on stdout, got: %.300s", r.out);
  run_free(&r);
  r = run("help bench");
  TL_CHECK(r.exit_code == 0 && strstr(r.out, "talus bench"), "talus help bench: exit %d: %.200s",
           r.exit_code, r.out);
  run_free(&r);

  /* a talus without talus_bench beside it */
  char dir[] = "/tmp/talus_test_cli_bench_XXXXXX", copy[64];
  if (!TL_CHECK(mkdtemp(dir) != NULL, "mkdtemp failed")) return;
  snprintf(copy, sizeof copy, "%s/talus", dir);
  if (TL_CHECK(copy_executable(talus_bin, copy) == 0, "cannot copy %s to %s", talus_bin, copy)) {
    const char *saved = talus_bin;
    char missing[96];
    snprintf(missing, sizeof missing, "%s/talus_bench", dir);
    talus_bin = copy;
    check_exit("bench --help", 1, missing);
    talus_bin = saved;
  }
  unlink(copy);
  rmdir(dir);
}

/* final_gc of `talus ARGS` (JSON) into gc (at most n); returns its length or -1. */
static int final_gc(const char *args, double *gc, int n) {
  run_result r = run(args);
  cJSON *j = r.exit_code == 0 ? cJSON_Parse(r.out) : NULL;
  const cJSON *a = j ? jget(j, "final_gc") : NULL, *it;
  int k = a && cJSON_IsArray(a) ? 0 : -1;
  if (k == 0)
    cJSON_ArrayForEach(it, a) if (k < n) gc[k++] = it->valuedouble;
  if (k < 0) TL_CHECK(0, "talus %s: exit %d, stderr %s", args, r.exit_code, r.err);
  cJSON_Delete(j);
  run_free(&r);
  return k;
}

/* --save-state / --load-state: 1 s, saved, then 1 s from the snapshot ends
 * where one 2 s run ends, bit for bit (the stand controller holds fixed
 * targets); a snapshot of another robot and an unwritable path are refused
 * before anything runs. */
static void check_state_files(const char *robots) {
  char path[] = "/tmp/talus_test_cli_state_XXXXXX", args[4800];
  int fd = mkstemp(path);
  if (!TL_CHECK(fd >= 0, "mkstemp")) return;
  close(fd);
  double a[64], b[64];
  int na = final_gc("simulate --duration 2 --json", a, 64);
  snprintf(args, sizeof args, "simulate --duration 1 --save-state '%s' --json", path);
  final_gc(args, b, 64);
  snprintf(args, sizeof args, "simulate --duration 1 --load-state '%s' --json", path);
  int nb = final_gc(args, b, 64);
  TL_CHECK(na > 0 && na == nb && memcmp(a, b, (size_t)na * sizeof(double)) == 0,
           "2 s run and 1 s + snapshot + 1 s differ (%d / %d coordinates)", na, nb);
  printf("--save-state / --load-state: 1 s + 1 s from the snapshot == one 2 s run, %d coordinates bit for bit\n", na);
  snprintf(args, sizeof args, "simulate '%s/pendulum/pendulum.urdf' --duration 0.01 --load-state '%s'", robots, path);
  check_exit(args, 1, "another world or model");
  check_exit("simulate --duration 0.01 --save-state /nonexistent/dir/x.state", 1, "/nonexistent/dir/x.state");
  unlink(path);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s TALUS_BINARY [SHARED_ROBOTS_DIR]\n", argv[0]);
    return 2;
  }
  talus_bin = argv[1];
  int fd = mkstemp(err_path);
  if (fd < 0) {
    perror("mkstemp");
    return 2;
  }
  close(fd);
  char shared[4096] = "";
  const char *env = getenv("TALUS_SHARED");
  if (env && env[0])
    snprintf(shared, sizeof shared, "%s/robots", env);
  else if (argc >= 3)
    snprintf(shared, sizeof shared, "%s", argv[2]);

  check_simulate("default robot", "simulate --duration 2 --json", 2.0, 0.001);
  if (argc >= 4) { /* calf limits [-2.8, -0.9]: q = 0 lies outside them */
    char small[4608];
    snprintf(small, sizeof small, "simulate '%s/talus_small_quadruped/talus_small_quadruped.urdf' "
             "--duration 5 --json", argv[3]);
    check_simulate("talus_small_quadruped", small, 5.0, 0.001);
  }

  char anymal[4608], args[4800];
  snprintf(anymal, sizeof anymal, "%s/anymal_c/urdf/anymal.urdf", shared);
  struct stat sb;
  if (shared[0] && stat(anymal, &sb) == 0) {
    snprintf(args, sizeof args, "simulate '%s' --duration 10 --json", anymal);
    check_simulate("anymal_c", args, 10.0, 0.001);
    snprintf(args, sizeof args, "simulate '%s/hyq/robots/hyq_no_sensors.urdf' --duration 5 --json", shared);
    check_simulate("hyq (knee limits exclude 0)", args, 5.0, 0.001);
  } else {
    tl_test_skip("ANYmal C not found at '%s' (shared robot corpus absent): simulate not tested",
                 shared[0] ? anymal : "(no shared folder given)");
  }

  DIR *d = shared[0] ? opendir(shared) : NULL;
  if (d) {
    closedir(d);
    check_info(shared);
  } else {
    tl_test_skip("shared robot folder '%s' absent: talus info DOF table not tested",
                 shared[0] ? shared : "(not given)");
  }

  const char *missing = "/nonexistent/talus_test_cli_missing_robot.urdf";
  snprintf(args, sizeof args, "info '%s' --json", missing);
  check_exit(args, 1, missing);
  snprintf(args, sizeof args, "simulate '%s' --duration 0.01", missing);
  check_exit(args, 1, missing);
  check_exit("simulate --no-such-option", 2, "--no-such-option");
  check_exit("info --no-such-option", 2, "--no-such-option");
  check_exit("--no-such-option", 2, "--no-such-option");
  check_exit("frobnicate", 2, "frobnicate");
  check_exit("simulate --duration abc", 2, NULL);
  check_bench();
  if (argc >= 4) check_state_files(argv[3]);

  unlink(err_path);
  return tl_test_finish();
}
