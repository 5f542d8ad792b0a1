/* Guards: src/cli/cli_dynamics.c (`talus dynamics`), src/base/json_number.c, and through them
 * src/dynamics/crba.c, rnea.c, kinematics.c against ../shared/reference. */
/* `talus dynamics` end to end: run the command line on reference files of
 * shared/reference and compare its JSON output with them; check that bad
 * states files are refused with exit status 1 and a message naming the file.
 *
 * Compared per state (README of shared/reference): M, h, g,
 * udot_zero_torque, com, energies, bodies (link, joint, pos, R, Jp, Jr) and
 * frames (pos, R of every reference frame, matched by joint and link), each
 * with the relative error max|a - b| / max(1, max|b|) <= 1e-9.
 *
 * Usage: test_cli_dynamics TALUS_BINARY SHARED_DIR PROJECT_ROBOTS_DIR
 *   SHARED_DIR holds robots/ and reference/; $TALUS_SHARED overrides it.
 * Exit: 0 all passed, 1 a check failed, 77 (ctest SKIP_RETURN_CODE) the
 * shared folder is missing (the error-path checks, which use the project's
 * own robot, still run first and must pass). */
#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "test_util.h"

#define REF_TOL 1e-9

extern char **environ;

static const char *g_talus;     /* the talus binary */
static char g_tmp[256];         /* scratch folder */

/* ---------------------------------------------------------------- helpers */

static int write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  int ok = fputs(text, f) >= 0;
  return (fclose(f) == 0 && ok) ? 0 : -1;
}

static cJSON *read_json(const char *path) {
  char *text = tl_test_read_text(path, NULL);
  cJSON *root = text ? cJSON_Parse(text) : NULL;
  free(text);
  return root;
}

static int is_dir(const char *path) {
  struct stat st;
  return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *path) {
  struct stat st;
  return path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Run `talus dynamics ARGS...` (NULL-terminated) with stdout and stderr
 * into files of the scratch folder. Returns the exit status, -1 if it
 * could not run or was killed. *err (free()) receives stderr. */
static int run_dynamics(char **err, const char *arg0, ...) {
  char out_path[300], err_path[300];
  snprintf(out_path, sizeof out_path, "%s/stdout.txt", g_tmp);
  snprintf(err_path, sizeof err_path, "%s/stderr.txt", g_tmp);
  const char *argv[16];
  int n = 0;
  argv[n++] = g_talus;
  argv[n++] = "dynamics";
  va_list ap;
  va_start(ap, arg0);
  for (const char *a = arg0; a && n < 15; a = va_arg(ap, const char *)) argv[n++] = a;
  va_end(ap);
  argv[n] = NULL;

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid;
  int rc = posix_spawn(&pid, g_talus, &fa, NULL, (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    printf("cannot run %s: %s\n", g_talus, strerror(rc));
    return -1;
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  if (err) *err = tl_test_read_text(err_path, NULL);
  if (err && !*err) *err = strdup("");
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* max|a - b| / max(1, max|b|) over two JSON number arrays; INFINITY if
 * their lengths differ or an entry is not a number. */
static double rel_err_json(const cJSON *a, const cJSON *b) {
  if (!cJSON_IsArray(a) || !cJSON_IsArray(b) || cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
    return INFINITY;
  double dmax = 0.0, bmax = 0.0;
  const cJSON *x = a->child, *y = b->child;
  for (; x && y; x = x->next, y = y->next) {
    if (!cJSON_IsNumber(x) || !cJSON_IsNumber(y)) return INFINITY;
    double d = fabs(x->valuedouble - y->valuedouble);
    if (!(d <= dmax)) dmax = d; /* NaN propagates */
    if (fabs(y->valuedouble) > bmax) bmax = fabs(y->valuedouble);
  }
  return dmax / (bmax > 1.0 ? bmax : 1.0);
}

static double rel_err_num(const cJSON *a, const cJSON *b) {
  if (!cJSON_IsNumber(a) || !cJSON_IsNumber(b)) return INFINITY;
  double bmax = fabs(b->valuedouble);
  return fabs(a->valuedouble - b->valuedouble) / (bmax > 1.0 ? bmax : 1.0);
}

static const cJSON *jget(const cJSON *o, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* Equal strings or both JSON null. */
static int same_name(const cJSON *a, const cJSON *b) {
  if (cJSON_IsNull(a) && cJSON_IsNull(b)) return 1;
  return cJSON_IsString(a) && cJSON_IsString(b) && strcmp(a->valuestring, b->valuestring) == 0;
}

/* ------------------------------------------------------------- comparison */

enum { C_M, C_H, C_G, C_UDOT, C_COM, C_ENERGY, C_BODY_POSE, C_BODY_JAC, C_FRAME, NCMP };
static const char *const cmp_name[NCMP] = {"M", "h", "g", "udot_zero_torque", "com",
                                           "energies", "bodies pos/R", "bodies Jp/Jr", "frames"};

typedef struct worst {
  double e[NCMP];
  char where[NCMP][160];
} worst;

static void keep(worst *w, int c, double e, int state, const char *what) {
  if (isnan(e)) e = INFINITY;
  if (e > w->e[c] || (e == INFINITY && !w->where[c][0])) {
    w->e[c] = e;
    snprintf(w->where[c], sizeof w->where[c], "state %d%s%s", state, what ? ": " : "",
             what ? what : "");
  }
}

static void compare_bodies(worst *w, const cJSON *out, const cJSON *ref, int k) {
  const cJSON *bo = jget(out, "bodies"), *br = jget(ref, "bodies");
  if (cJSON_GetArraySize(bo) != cJSON_GetArraySize(br)) {
    keep(w, C_BODY_POSE, INFINITY, k, "number of bodies differs");
    return;
  }
  const cJSON *x = bo ? bo->child : NULL, *y = br ? br->child : NULL;
  for (; x && y; x = x->next, y = y->next) {
    const char *link = cJSON_IsString(jget(y, "link")) ? jget(y, "link")->valuestring : "?";
    if (!same_name(jget(x, "link"), jget(y, "link")) ||
        !same_name(jget(x, "joint"), jget(y, "joint"))) {
      keep(w, C_BODY_POSE, INFINITY, k, link);
      continue;
    }
    keep(w, C_BODY_POSE, rel_err_json(jget(x, "pos"), jget(y, "pos")), k, link);
    keep(w, C_BODY_POSE, rel_err_json(jget(x, "R"), jget(y, "R")), k, link);
    keep(w, C_BODY_JAC, rel_err_json(jget(x, "Jp"), jget(y, "Jp")), k, link);
    keep(w, C_BODY_JAC, rel_err_json(jget(x, "Jr"), jget(y, "Jr")), k, link);
  }
}

/* Every reference frame must be in the output, with the same joint and link. */
static void compare_frames(worst *w, const cJSON *out, const cJSON *ref, int k) {
  const cJSON *y;
  cJSON_ArrayForEach(y, jget(ref, "frames")) {
    const cJSON *x = NULL, *it;
    cJSON_ArrayForEach(it, jget(out, "frames")) {
      if (same_name(jget(it, "joint"), jget(y, "joint")) &&
          same_name(jget(it, "link"), jget(y, "link"))) {
        x = it;
        break;
      }
    }
    const char *link = cJSON_IsString(jget(y, "link")) ? jget(y, "link")->valuestring : "?";
    if (!x) {
      keep(w, C_FRAME, INFINITY, k, link);
      continue;
    }
    keep(w, C_FRAME, rel_err_json(jget(x, "pos"), jget(y, "pos")), k, link);
    keep(w, C_FRAME, rel_err_json(jget(x, "R"), jget(y, "R")), k, link);
  }
}

static void compare_result(const char *name, const cJSON *out, const cJSON *ref) {
  static const char *const same[] = {"nq", "nv", "base", "joint_names"};
  for (size_t i = 0; i < sizeof same / sizeof same[0]; ++i)
    TL_CHECK(cJSON_Compare(jget(out, same[i]), jget(ref, same[i]), 1), "%s: \"%s\" differs",
             name, same[i]);
  const cJSON *so = jget(out, "states"), *sr = jget(ref, "states");
  int n = cJSON_GetArraySize(sr);
  if (!TL_CHECK(cJSON_IsArray(so) && cJSON_GetArraySize(so) == n && n > 0,
                "%s: %d states in the output, %d in the reference", name,
                cJSON_GetArraySize(so), n))
    return;
  worst w;
  memset(&w, 0, sizeof w);
  static const char *const vec_key[] = {"M", "h", "g", "udot_zero_torque", "com"};
  static const int vec_cmp[] = {C_M, C_H, C_G, C_UDOT, C_COM};
  for (int k = 0; k < n; ++k) {
    const cJSON *x = cJSON_GetArrayItem(so, k), *y = cJSON_GetArrayItem(sr, k);
    /* q and u come back as used: quaternions normalised, to rounding */
    TL_CHECK(rel_err_json(jget(x, "q"), jget(y, "q")) <= 1e-15 &&
                 rel_err_json(jget(x, "u"), jget(y, "u")) <= 1e-15,
             "%s: state %d: q or u not echoed", name, k);
    for (int i = 0; i < 5; ++i)
      keep(&w, vec_cmp[i], rel_err_json(jget(x, vec_key[i]), jget(y, vec_key[i])), k, NULL);
    keep(&w, C_ENERGY, rel_err_num(jget(x, "kinetic_energy"), jget(y, "kinetic_energy")), k,
         "kinetic");
    keep(&w, C_ENERGY, rel_err_num(jget(x, "potential_energy"), jget(y, "potential_energy")), k,
         "potential");
    keep(&w, C_ENERGY, rel_err_num(jget(x, "mass"), jget(y, "mass")), k, "mass");
    compare_bodies(&w, x, y, k);
    compare_frames(&w, x, y, k);
  }
  printf("%s: %d states, worst relative error:", name, n);
  for (int c = 0; c < NCMP; ++c) printf(" %s %.1e%s", cmp_name[c], w.e[c], c + 1 < NCMP ? "," : "\n");
  for (int c = 0; c < NCMP; ++c)
    TL_CHECK(w.e[c] <= REF_TOL, "%s: %s: relative error %.3g > %g at %s", name, cmp_name[c], w.e[c],
             REF_TOL, w.where[c]);
}

/* --------------------------------------------------------------- the runs */

/* `talus dynamics URDF --states REF [EXTRA] --out OUT`, compared with REF. */
static void check_robot(const char *shared, const char *name, const char *urdf, const char *ref,
                        const char *states, const char *extra) {
  char urdf_path[1024], ref_path[1024], out_path[300];
  snprintf(urdf_path, sizeof urdf_path, "%s/robots/%s", shared, urdf);
  snprintf(ref_path, sizeof ref_path, "%s/reference/%s", shared, ref);
  snprintf(out_path, sizeof out_path, "%s/%s.out.json", g_tmp, name);
  if (!states) states = ref_path;
  char *err = NULL;
  int rc = extra ? run_dynamics(&err, urdf_path, "--states", states, extra, "--out", out_path, NULL)
                 : run_dynamics(&err, urdf_path, "--states", states, "--out", out_path, NULL);
  int ran = TL_CHECK(rc == 0, "%s: talus dynamics exit status %d: %s", name, rc, err ? err : "");
  free(err);
  if (!ran) return;
  cJSON *out = read_json(out_path), *refj = read_json(ref_path);
  if (TL_CHECK(out != NULL, "%s: output %s is not valid JSON", name, out_path) &&
      TL_CHECK(refj != NULL, "%s: cannot read reference %s", name, ref_path))
    compare_result(name, out, refj);
  cJSON_Delete(out);
  cJSON_Delete(refj);
  remove(out_path);
}

/* A plain array of the reference's {q, u} (no "base", no "gravity"). */
static int write_plain_states(const char *ref_path, const char *path) {
  cJSON *ref = read_json(ref_path), *arr = cJSON_CreateArray();
  const cJSON *st, *states = ref ? jget(ref, "states") : NULL;
  int ok = ref && arr && cJSON_IsArray(states);
  cJSON_ArrayForEach(st, states) {
    cJSON *o = cJSON_CreateObject();
    ok = ok && o && cJSON_AddItemToObject(o, "q", cJSON_Duplicate(jget(st, "q"), 1)) &&
         cJSON_AddItemToObject(o, "u", cJSON_Duplicate(jget(st, "u"), 1)) &&
         cJSON_AddItemToArray(arr, o);
    if (!ok) break;
  }
  char *text = ok ? cJSON_Print(arr) : NULL;
  ok = text && write_text(path, text) == 0;
  cJSON_free(text);
  cJSON_Delete(ref);
  cJSON_Delete(arr);
  return ok ? 0 : -1;
}

/* A states file that must be refused: exit 1, stderr names the file and
 * contains `want` (may be NULL), no output file. */
static void check_refused(const char *urdf, const char *label, const char *content,
                          const char *want, const char *extra) {
  char path[300], out_path[300];
  snprintf(path, sizeof path, "%s/%s.json", g_tmp, label);
  snprintf(out_path, sizeof out_path, "%s/%s.out.json", g_tmp, label);
  if (content && !TL_CHECK(write_text(path, content) == 0, "cannot write %s", path)) return;
  char *err = NULL;
  int rc = extra ? run_dynamics(&err, urdf, "--states", path, extra, "--out", out_path, NULL)
                 : run_dynamics(&err, urdf, "--states", path, "--out", out_path, NULL);
  const char *msg = err ? err : "";
  TL_CHECK(rc == 1, "%s: exit status %d, expected 1 (stderr: %s)", label, rc, msg);
  TL_CHECK(strstr(msg, path) != NULL, "%s: the message does not name %s: %s", label, path, msg);
  TL_CHECK(!want || strstr(msg, want) != NULL, "%s: the message lacks \"%s\": %s", label, want,
           msg);
  TL_CHECK(!is_file(out_path), "%s: an output file was written despite the error", label);
  printf("refused %-14s %s", label, msg);
  free(err);
  remove(path);
  remove(out_path);
}

static void check_errors(const char *robots_dir) {
  char urdf[1024];
  snprintf(urdf, sizeof urdf, "%s/talus_quadruped/talus_quadruped.urdf", robots_dir);
  if (!TL_CHECK(is_file(urdf), "project robot %s is missing", urdf)) return;
  check_refused(urdf, "truncated", "{\"states\": [{\"q\": [0, 0,", NULL, NULL);
  check_refused(urdf, "empty", "", NULL, NULL);
  check_refused(urdf, "not_states", "{\"statez\": []}", "\"states\"", NULL);
  check_refused(urdf, "missing_file", NULL, NULL, NULL);
  /* the project quadruped has a floating base: nq = 7 + joints, so 3 numbers are wrong */
  check_refused(urdf, "wrong_length", "[{\"q\": [0, 0, 1], \"u\": [0, 0, 0]}]", "state 0", NULL);
  check_refused(urdf, "fixed_override", "[{\"q\": [0, 0, 1, 1, 0, 0, 0], \"u\": []}]", "state 0",
                "--fixed-base");
  check_refused(urdf, "bad_gravity", "{\"gravity\": [0, 0], \"states\": []}", "gravity", NULL);
  check_refused(urdf, "bad_base", "{\"base\": \"wobbly\", \"states\": []}", "base", NULL);
  check_refused(urdf, "nan_literal", "[{\"q\": [NaN], \"u\": []}]", NULL, NULL);

  /* A good state 0 then a bad state 1: the message gives index 1 and why. */
  char *err = NULL;
  char ok_path[300];
  snprintf(ok_path, sizeof ok_path, "%s/zero_state.json", g_tmp);
  /* an empty states list gives nq / nv */
  TL_CHECK(write_text(ok_path, "{\"states\": []}") == 0, "cannot write %s", ok_path);
  int rc = run_dynamics(&err, urdf, "--states", ok_path, NULL);
  free(err);
  char out_path[300];
  snprintf(out_path, sizeof out_path, "%s/stdout.txt", g_tmp);
  cJSON *o = read_json(out_path);
  remove(ok_path);
  int nq = cJSON_IsNumber(jget(o, "nq")) ? jget(o, "nq")->valueint : -1;
  int nv = cJSON_IsNumber(jget(o, "nv")) ? jget(o, "nv")->valueint : -1;
  cJSON_Delete(o);
  if (!TL_CHECK(rc == 0 && nq >= 7 && nv == nq - 1, "empty states list: exit %d, nq %d, nv %d", rc,
                nq, nv))
    return;
  size_t cap = (size_t)(nq + nv) * 8 + 200;
  char *text = malloc(2 * cap), *p = text;
  if (!TL_CHECK(text != NULL, "malloc")) return;
  for (int s = 0; s < 2; ++s) {
    p += sprintf(p, "%s{\"q\": [0, 0, 1, 1, 0, 0, 0", s ? ", " : "[");
    for (int i = 7; i < nq; ++i) p += sprintf(p, ", %s", s == 1 && i == nq - 1 ? "null" : "0");
    p += sprintf(p, "], \"u\": [0");
    for (int i = 1; i < nv; ++i) p += sprintf(p, ", 0");
    p += sprintf(p, "]}");
  }
  sprintf(p, "]");
  char want[64];
  snprintf(want, sizeof want, "state 1: q[%d] is null", nq - 1);
  check_refused(urdf, "null_in_state1", text, want, NULL);
  free(text);
}

int main(int argc, char **argv) {
  if (argc < 4) {
    printf("usage: %s TALUS_BINARY SHARED_DIR PROJECT_ROBOTS_DIR\n", argv[0]);
    return 1;
  }
  g_talus = argv[1];
  const char *shared = tl_test_shared_dir(argc, argv, 2);
  const char *tmp = getenv("TMPDIR");
  snprintf(g_tmp, sizeof g_tmp, "%s/talus_cli_dynamics_XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (!mkdtemp(g_tmp)) {
    printf("cannot create a scratch folder %s\n", g_tmp);
    return 1;
  }

  check_errors(argv[3]);

  char ref_dir[1024], robots_dir[1024];
  snprintf(ref_dir, sizeof ref_dir, "%s/reference", shared ? shared : "");
  snprintf(robots_dir, sizeof robots_dir, "%s/robots", shared ? shared : "");
  int have_shared = shared && is_dir(ref_dir) && is_dir(robots_dir);
  if (!have_shared) {
    tl_test_skip("shared folder %s (reference/ and robots/) not found: the comparisons of "
                 "talus dynamics with the reference files were not run",
                 shared ? shared : "(none given)");
  } else {
    check_robot(shared, "anymal_c", "anymal_c/urdf/anymal.urdf", "anymal_c__anymal.json", NULL,
                NULL);
    check_robot(shared, "kuka_iiwa", "kuka_iiwa/model.urdf", "kuka_iiwa.json", NULL,
                "--fixed-base");
    /* plain array input: no "base" in the file, so --fixed-base is what makes it fixed */
    char ref_path[1100], plain[300];
    snprintf(ref_path, sizeof ref_path, "%s/kuka_iiwa.json", ref_dir);
    snprintf(plain, sizeof plain, "%s/kuka_plain.json", g_tmp);
    if (TL_CHECK(write_plain_states(ref_path, plain) == 0, "cannot write %s", plain))
      check_robot(shared, "kuka_iiwa_plain_array", "kuka_iiwa/model.urdf", "kuka_iiwa.json",
                  plain, "--fixed-base");
    remove(plain);
  }

  char path[300];
  snprintf(path, sizeof path, "%s/stdout.txt", g_tmp);
  remove(path);
  snprintf(path, sizeof path, "%s/stderr.txt", g_tmp);
  remove(path);
  rmdir(g_tmp);
  int rc = tl_test_finish();
  if (rc == 0 && !have_shared) {
    printf("SKIPPED (exit %d): ../shared is absent\n", TL_TEST_SKIP_CODE);
    return TL_TEST_SKIP_CODE;
  }
  return rc;
}
