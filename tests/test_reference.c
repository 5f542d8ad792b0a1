/* Guards: src/dynamics/crba.c, src/dynamics/rnea.c, src/dynamics/kinematics.c, urdf/urdf_compile.c
 * (M, h, COM, energies, poses, Jacobians against ../shared/reference). */
/* Talus against independent reference dynamics (the JSON files in shared/reference).
 *
 * The reference files were computed by MuJoCo from the same URDFs and
 * converted to Talus's (RaiSim's) conventions; see shared/reference/README.md.
 * For every file: load the URDF with the file's base type, check the model
 * structure (nq, nv, joint order, DOF indices, total mass), then at every
 * state compare M, h, g = h(q, 0), system COM, kinetic and potential energy,
 * body poses and point Jacobians (reference `bodies`) and link frame poses
 * (reference `frames`). Error measure per quantity (README):
 * max|a - b| / max(1, max|b|), which must stay below 1e-9.
 *
 * Usage: test_reference REFERENCE_DIR [ROBOTS_DIR]
 *   ROBOTS_DIR defaults to REFERENCE_DIR/../robots. If TALUS_SHARED is set,
 *   $TALUS_SHARED/reference and $TALUS_SHARED/robots are used instead.
 * Exit: 0 all checks passed, 1 a check failed, 77 (ctest SKIP_RETURN_CODE)
 * the reference folder is missing or nothing could be tested.
 * A robot is reported as skipped, never passed, when Talus answers
 * TL_ERR_UNSUPPORTED (e.g. spherical joints not implemented yet). */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "talus/talus.h"
#include "test_util.h"

#define REF_TOL 1e-9       /* relative error per quantity */
#define MASS_REL_TOL 1e-12 /* total mass */
#define MAX_NOTES 12       /* detail lines printed per robot */

enum { Q_M, Q_H, Q_G, Q_POSE, Q_JAC, Q_COM, Q_ENERGY, NQTY };
static const char *const qty_name[NQTY] = {"M", "h", "g", "pose", "jac", "com", "energy"};

typedef struct worst {
  double e;         /* worst relative error so far (INFINITY: not computable) */
  char where[200];  /* where it happened */
} worst;

typedef struct robot_run {
  const char *name; /* reference file name without .json */
  worst w[NQTY];
  int skipped;
  char skip_reason[1200];
  int nnotes;
} robot_run;

/* ------------------------------------------------------------------ helpers */

static void note(robot_run *r, const char *fmt, ...) TL_TEST_PRINTF_(2, 3);
static void note(robot_run *r, const char *fmt, ...) {
  if (r->nnotes++ >= MAX_NOTES) {
    if (r->nnotes == MAX_NOTES + 1) printf("  %s: (further details suppressed)\n", r->name);
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  printf("  %s: ", r->name);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}

/* max|a - b| / max(1, max|b|); INFINITY if anything is NaN. */
static double rel_err(const double *a, const double *b, int n) {
  double dmax = 0.0, bmax = 0.0;
  for (int i = 0; i < n; ++i) {
    double d = fabs(a[i] - b[i]);
    if (isnan(d)) return INFINITY;
    if (d > dmax) dmax = d;
    if (fabs(b[i]) > bmax) bmax = fabs(b[i]);
  }
  return dmax / (bmax > 1.0 ? bmax : 1.0);
}

static void record(robot_run *r, int q, double e, const char *fmt, ...) TL_TEST_PRINTF_(4, 5);
static void record(robot_run *r, int q, double e, const char *fmt, ...) {
  if (isnan(e)) e = INFINITY;
  if (e < r->w[q].e || (e == r->w[q].e && r->w[q].where[0])) return;
  r->w[q].e = e;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->w[q].where, sizeof r->w[q].where, fmt, ap);
  va_end(ap);
}

/* Check a Talus call. Returns 1 if it succeeded. TL_ERR_UNSUPPORTED marks
 * the robot skipped; any other failure is noted and makes quantity `q` (or
 * every quantity if q < 0) fail. */
static int api(robot_run *r, tl_status st, tl_error *err, int q, const char *what, int state) {
  if (st == TL_OK) return 1;
  const char *msg = err->message[0] ? err->message : tl_status_name(st);
  if (st == TL_ERR_UNSUPPORTED) {
    if (!r->skipped)
      snprintf(r->skip_reason, sizeof r->skip_reason, "%s: unsupported: %s", what, msg);
    r->skipped = 1;
  } else {
    note(r, "state %d: %s failed (%s): %s", state, what, tl_status_name(st), msg);
    for (int k = 0; k < NQTY; ++k)
      if (q < 0 || k == q) record(r, k, INFINITY, "state %d: %s failed", state, what);
  }
  memset(err, 0, sizeof *err); /* no stale message for the next call */
  return 0;
}

static const cJSON *jget(const cJSON *obj, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* Copy a JSON array of exactly n numbers into out. Returns 1 on success. */
static int jvec(const cJSON *arr, double *out, int n) {
  if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) != n) return 0;
  int i = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, arr) {
    if (!cJSON_IsNumber(it)) return 0;
    out[i++] = it->valuedouble;
  }
  return 1;
}

static int jnum(const cJSON *obj, const char *key, double *out) {
  const cJSON *it = jget(obj, key);
  if (!cJSON_IsNumber(it)) return 0;
  *out = it->valuedouble;
  return 1;
}

static const char *jstr(const cJSON *obj, const char *key) {
  const cJSON *it = jget(obj, key);
  return cJSON_IsString(it) ? it->valuestring : NULL;
}

/* ------------------------------------------------------------ model checks */

/* Structure of the model against the reference. Returns 1 if nq and nv
 * match (the states can then be compared). */
static int check_structure(robot_run *r, const tl_model *model, const cJSON *root, int ref_nq,
                           int ref_nv) {
  int nq = tl_model_nq(model), nv = tl_model_nv(model);
  int ok_dims = TL_CHECK(nq == ref_nq, "%s: nq %d, reference %d", r->name, nq, ref_nq);
  ok_dims &= TL_CHECK(nv == ref_nv, "%s: nv %d, reference %d", r->name, nv, ref_nv);

  /* Joint order: body i (i >= 1) carries movable joint joint_names[i - 1]. */
  const cJSON *names = jget(root, "joint_names");
  int nbody = tl_model_nbody(model);
  int nnames = cJSON_IsArray(names) ? cJSON_GetArraySize(names) : -1;
  char why[512] = "";
  if (nnames != nbody - 1) {
    snprintf(why, sizeof why, "%d movable joints, reference %d", nbody - 1, nnames);
  } else {
    for (int i = 1; i < nbody && !why[0]; ++i) {
      const cJSON *it = cJSON_GetArrayItem(names, i - 1);
      const char *want = cJSON_IsString(it) ? it->valuestring : "?";
      const char *got = tl_model_joint_name(model, i);
      if (!got || strcmp(got, want) != 0)
        snprintf(why, sizeof why, "body %d joint '%s', reference '%s'", i, got ? got : "(null)",
                 want);
    }
  }
  TL_CHECK(!why[0], "%s: joint order: %s", r->name, why);

  /* DOF layout: q_index, u_index, nq, nv of each movable joint. */
  why[0] = '\0';
  const cJSON *joints = jget(root, "joints"), *j;
  cJSON_ArrayForEach(j, joints) {
    const char *jn = jstr(j, "name");
    double qi, ui, jq, jv;
    if (!jn || !jnum(j, "q_index", &qi) || !jnum(j, "u_index", &ui) || !jnum(j, "nq", &jq) ||
        !jnum(j, "nv", &jv)) {
      snprintf(why, sizeof why, "malformed `joints` entry in the reference");
      break;
    }
    int b = -1;
    for (int i = 1; i < nbody; ++i) {
      const char *got = tl_model_joint_name(model, i);
      if (got && strcmp(got, jn) == 0) b = i;
    }
    if (b < 0) {
      snprintf(why, sizeof why, "joint '%s' not found", jn);
      break;
    }
    tl_joint_type t = tl_model_joint_type(model, b);
    int gq = tl_model_joint_q_index(model, b), gu = tl_model_joint_u_index(model, b);
    if (gq != (int)qi || gu != (int)ui || tl_joint_nq(t) != (int)jq || tl_joint_nv(t) != (int)jv) {
      snprintf(why, sizeof why,
               "joint '%s' (%s): q_index %d u_index %d nq %d nv %d, reference %d %d %d %d", jn,
               tl_joint_type_name(t), gq, gu, tl_joint_nq(t), tl_joint_nv(t), (int)qi, (int)ui,
               (int)jq, (int)jv);
      break;
    }
  }
  TL_CHECK(!why[0], "%s: DOF layout: %s", r->name, why);

  double mref = NAN, m = tl_model_total_mass(model);
  jnum(root, "total_mass", &mref);
  TL_CHECK(fabs(m - mref) <= MASS_REL_TOL * fabs(mref), "%s: total mass %.17g, reference %.17g",
           r->name, m, mref);
  return ok_dims;
}

/* ------------------------------------------------------------ state checks */

typedef struct buffers {
  double *q, *u, *zero, *M, *Mref, *h, *href, *Jp, *Jr, *Jref;
} buffers;

static void compare_pose(robot_run *r, int state, const char *what, const cJSON *entry,
                         const double pos[3], const double R[9]) {
  double pref[3], Rref[9];
  if (!jvec(jget(entry, "pos"), pref, 3) || !jvec(jget(entry, "R"), Rref, 9)) {
    note(r, "state %d: %s: malformed pos/R in the reference", state, what);
    record(r, Q_POSE, INFINITY, "state %d: %s (bad reference)", state, what);
    return;
  }
  record(r, Q_POSE, rel_err(pos, pref, 3), "state %d: %s pos", state, what);
  record(r, Q_POSE, rel_err(R, Rref, 9), "state %d: %s R", state, what);
}

/* Compare one state. Returns 0 when the world or system could not be set up
 * at all (independent of the state, so the remaining states are not tried). */
static int check_state(robot_run *r, const tl_model *model, const double gravity[3],
                       const cJSON *st, int k, buffers *b) {
  int nq = tl_model_nq(model), nv = tl_model_nv(model);
  tl_error err;
  memset(&err, 0, sizeof err);
  if (!jvec(jget(st, "q"), b->q, nq) || !jvec(jget(st, "u"), b->u, nv)) {
    note(r, "state %d: malformed q/u in the reference", k);
    for (int i = 0; i < NQTY; ++i) record(r, i, INFINITY, "state %d: bad reference", k);
    return 1;
  }

  tl_world *world = NULL;
  tl_system *sys = NULL;
  int setup_ok = 0;
  if (!api(r, tl_world_create(&world, &err), &err, -1, "tl_world_create", k)) return 0;
  if (!api(r, tl_world_set_gravity(world, gravity, &err), &err, -1, "tl_world_set_gravity", k) ||
      !api(r, tl_world_add_system(world, model, &sys, &err), &err, -1, "tl_world_add_system", k))
    goto done;
  setup_ok = 1;
  if (!api(r, tl_system_set_state(sys, b->q, nq, b->u, nv, &err), &err, -1, "tl_system_set_state",
           k))
    goto done;

  /* Mass matrix. */
  if (!jvec(jget(st, "M"), b->Mref, nv * nv)) {
    record(r, Q_M, INFINITY, "state %d: bad reference M", k);
  } else if (api(r, tl_system_mass_matrix(sys, b->M, nv, &err), &err, Q_M,
                 "tl_system_mass_matrix", k)) {
    record(r, Q_M, rel_err(b->M, b->Mref, nv * nv), "state %d", k);
  }
  if (r->skipped) goto done;

  /* Nonlinear term at (q, u). */
  if (!jvec(jget(st, "h"), b->href, nv)) {
    record(r, Q_H, INFINITY, "state %d: bad reference h", k);
  } else if (api(r, tl_system_nonlinear_term(sys, b->h, nv, &err), &err, Q_H,
                 "tl_system_nonlinear_term", k)) {
    record(r, Q_H, rel_err(b->h, b->href, nv), "state %d", k);
  }
  if (r->skipped) goto done;

  /* Centre of mass and energies. */
  double com[3], cref[3], ke_ref, pe_ref;
  if (!jvec(jget(st, "com"), cref, 3)) {
    record(r, Q_COM, INFINITY, "state %d: bad reference com", k);
  } else if (api(r, tl_system_com(sys, com, &err), &err, Q_COM, "tl_system_com", k)) {
    record(r, Q_COM, rel_err(com, cref, 3), "state %d", k);
  }
  if (r->skipped) goto done;
  if (!jnum(st, "kinetic_energy", &ke_ref) || !jnum(st, "potential_energy", &pe_ref)) {
    record(r, Q_ENERGY, INFINITY, "state %d: bad reference energies", k);
  } else {
    double ke = tl_system_kinetic_energy(sys), pe = tl_system_potential_energy(sys);
    record(r, Q_ENERGY, rel_err(&ke, &ke_ref, 1), "state %d: kinetic", k);
    record(r, Q_ENERGY, rel_err(&pe, &pe_ref, 1), "state %d: potential", k);
  }

  /* Bodies: pose and Jacobians of the body origin. */
  const cJSON *ent;
  cJSON_ArrayForEach(ent, jget(st, "bodies")) {
    const char *link = jstr(ent, "link");
    int body = link ? tl_model_body_index(model, link) : -1;
    const char *bname = body >= 0 ? tl_model_body_name(model, body) : NULL;
    if (body < 0 || !bname || strcmp(bname, link) != 0) {
      if (k == 0)
        note(r, "reference body '%s' is not a Talus body (body_index %d, name '%s')",
             link ? link : "?", body, bname ? bname : "");
      record(r, Q_POSE, INFINITY, "body '%s' missing", link ? link : "?");
      record(r, Q_JAC, INFINITY, "body '%s' missing", link ? link : "?");
      continue;
    }
    double pos[3], R[9], pref[3];
    if (api(r, tl_system_body_pose(sys, body, pos, R, &err), &err, Q_POSE, "tl_system_body_pose",
            k))
      compare_pose(r, k, link, ent, pos, R);
    if (r->skipped) goto done;
    /* The Jacobian of the reference point, so that it is checked on its own. */
    if (!jvec(jget(ent, "pos"), pref, 3)) continue; /* already recorded by compare_pose */
    if (!api(r, tl_system_point_jacobian(sys, body, pref, b->Jp, b->Jr, nv, &err), &err, Q_JAC,
             "tl_system_point_jacobian", k)) {
      if (r->skipped) goto done;
      continue;
    }
    if (!jvec(jget(ent, "Jp"), b->Jref, 3 * nv))
      record(r, Q_JAC, INFINITY, "state %d: %s bad reference Jp", k, link);
    else
      record(r, Q_JAC, rel_err(b->Jp, b->Jref, 3 * nv), "state %d: %s Jp", k, link);
    if (!jvec(jget(ent, "Jr"), b->Jref, 3 * nv))
      record(r, Q_JAC, INFINITY, "state %d: %s bad reference Jr", k, link);
    else
      record(r, Q_JAC, rel_err(b->Jr, b->Jref, 3 * nv), "state %d: %s Jr", k, link);
  }

  /* Frames: every URDF link, found through its parent joint's frame (Talus
   * frames are named after joints); the root link is body 0. */
  cJSON_ArrayForEach(ent, jget(st, "frames")) {
    const char *link = jstr(ent, "link"), *joint = jstr(ent, "joint");
    char what[300];
    double pos[3], R[9];
    tl_status s;
    if (!joint) {
      snprintf(what, sizeof what, "root link '%s'", link ? link : "?");
      s = tl_system_body_pose(sys, 0, pos, R, &err);
    } else {
      snprintf(what, sizeof what, "frame '%s' (link '%s')", joint, link ? link : "?");
      int f = tl_model_frame_index(model, joint);
      if (f < 0) {
        if (k == 0) note(r, "no Talus frame named '%s'", joint);
        record(r, Q_POSE, INFINITY, "%s missing", what);
        continue;
      }
      s = tl_system_frame_pose(sys, f, pos, R, &err);
    }
    if (api(r, s, &err, Q_POSE, joint ? "tl_system_frame_pose" : "tl_system_body_pose", k))
      compare_pose(r, k, what, ent, pos, R);
    if (r->skipped) goto done;
  }

  /* g = h(q, 0). */
  if (!api(r, tl_system_set_state(sys, b->q, nq, b->zero, nv, &err), &err, Q_G,
           "tl_system_set_state (u = 0)", k))
    goto done;
  if (!jvec(jget(st, "g"), b->href, nv)) {
    record(r, Q_G, INFINITY, "state %d: bad reference g", k);
  } else if (api(r, tl_system_nonlinear_term(sys, b->h, nv, &err), &err, Q_G,
                 "tl_system_nonlinear_term (u = 0)", k)) {
    record(r, Q_G, rel_err(b->h, b->href, nv), "state %d", k);
  }

done:
  tl_world_free(world);
  return setup_ok;
}

/* ---------------------------------------------------------------- one file */

static void run_file(const char *ref_dir, const char *robots_dir, const char *fname) {
  char name[256], path[4608];
  snprintf(name, sizeof name, "%.*s", (int)(strlen(fname) - 5), fname);
  robot_run r;
  memset(&r, 0, sizeof r);
  r.name = name;

  snprintf(path, sizeof path, "%s/%s", ref_dir, fname);
  char *text = tl_test_read_text(path, NULL);
  cJSON *root = text ? cJSON_Parse(text) : NULL;
  free(text);
  const char *urdf = jstr(root, "urdf"), *base = jstr(root, "base");
  double gravity[3] = {0, 0, 0}, dnq = -1, dnv = -1;
  const cJSON *states = jget(root, "states");
  /* Reading the reference and loading the URDF count as checks only when they fail. */
  if (!(root && urdf && base && jvec(jget(root, "gravity"), gravity, 3) && jnum(root, "nq", &dnq) &&
        jnum(root, "nv", &dnv) && cJSON_IsArray(states))) {
    TL_CHECK(0, "%s: cannot read reference file %s (missing or malformed)", name, path);
    cJSON_Delete(root);
    return;
  }
  int nstates = cJSON_GetArraySize(states);

  tl_load_options opt = tl_load_options_default();
  if (strcmp(base, "fixed") == 0)
    opt.base = TL_BASE_FIXED;
  else if (strcmp(base, "floating") == 0)
    opt.base = TL_BASE_FLOATING;
  else {
    TL_CHECK(0, "%s: unknown base '%s' in the reference", name, base);
    cJSON_Delete(root);
    return;
  }

  snprintf(path, sizeof path, "%s/%s", robots_dir, urdf);
  tl_model *model = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_status st = tl_model_load_urdf(path, &opt, &model, &err);
  if (st == TL_ERR_UNSUPPORTED) {
    printf("%-44s %2d states  SKIP\n", name, nstates);
    tl_test_skip("%s: loading the URDF: %s", name, err.message[0] ? err.message : path);
    cJSON_Delete(root);
    return;
  }
  if (st != TL_OK || !model) {
    TL_CHECK(0, "%s: loading %s failed (%s): %s", name, path, tl_status_name(st), err.message);
    tl_model_free(model);
    cJSON_Delete(root);
    return;
  }

  int comparable = check_structure(&r, model, root, (int)dnq, (int)dnv);
  int nq = tl_model_nq(model), nv = tl_model_nv(model);
  if (!comparable) {
    for (int i = 0; i < NQTY; ++i) record(&r, i, INFINITY, "nq/nv differ from the reference");
  } else {
    buffers b;
    size_t n = (size_t)(nv > 0 ? nv : 1);
    b.q = calloc((size_t)(nq > 0 ? nq : 1), sizeof(double));
    b.u = calloc(n, sizeof(double));
    b.zero = calloc(n, sizeof(double));
    b.M = calloc(n * n, sizeof(double));
    b.Mref = calloc(n * n, sizeof(double));
    b.h = calloc(n, sizeof(double));
    b.href = calloc(n, sizeof(double));
    b.Jp = calloc(3 * n, sizeof(double));
    b.Jr = calloc(3 * n, sizeof(double));
    b.Jref = calloc(3 * n, sizeof(double));
    if (!b.q || !b.u || !b.zero || !b.M || !b.Mref || !b.h || !b.href || !b.Jp || !b.Jr ||
        !b.Jref) {
      fprintf(stderr, "out of memory\n");
      exit(2);
    }
    int k = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, states) {
      if (!check_state(&r, model, gravity, s, k++, &b) || r.skipped) break;
    }
    double *all[] = {b.q, b.u, b.zero, b.M, b.Mref, b.h, b.href, b.Jp, b.Jr, b.Jref};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) free(all[i]);
  }

  /* One line per robot, then one harness check per quantity. */
  printf("%-44s %2d states", name, nstates);
  int pass = 1;
  if (!r.skipped) {
    for (int i = 0; i < NQTY; ++i) {
      printf("  %s %.1e", qty_name[i], r.w[i].e);
      if (!(r.w[i].e < REF_TOL)) pass = 0;
    }
  }
  printf("  %s\n", r.skipped ? "SKIP" : pass ? "PASS" : "FAIL");
  if (r.skipped) {
    tl_test_skip("%s: %s", name, r.skip_reason);
  } else {
    for (int i = 0; i < NQTY; ++i)
      TL_CHECK(r.w[i].e < REF_TOL, "%s: %s: worst relative error %.3g (%s), tolerance %.0e", name,
               qty_name[i], r.w[i].e, r.w[i].where, REF_TOL);
  }
  fflush(stdout);
  tl_model_free(model);
  cJSON_Delete(root);
}

/* -------------------------------------------------------------------- main */

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int dir_exists(const char *path) {
  DIR *d = path ? opendir(path) : NULL;
  if (d) closedir(d);
  return d != NULL;
}

int main(int argc, char **argv) {
  char ref_dir[2048], robots_dir[2048];
  const char *shared = getenv("TALUS_SHARED");
  if (shared && shared[0]) {
    snprintf(ref_dir, sizeof ref_dir, "%s/reference", shared);
    snprintf(robots_dir, sizeof robots_dir, "%s/robots", shared);
  } else if (argc >= 2) {
    snprintf(ref_dir, sizeof ref_dir, "%s", argv[1]);
    if (argc >= 3)
      snprintf(robots_dir, sizeof robots_dir, "%s", argv[2]);
    else
      snprintf(robots_dir, sizeof robots_dir, "%s/../robots", argv[1]);
  } else {
    fprintf(stderr, "usage: %s REFERENCE_DIR [ROBOTS_DIR]  (or set TALUS_SHARED)\n", argv[0]);
    return 2;
  }

  if (!dir_exists(ref_dir)) {
    printf("SKIPPED: shared reference folder not found at %s\n", ref_dir);
    return TL_TEST_SKIP_CODE;
  }
  if (!dir_exists(robots_dir)) {
    printf("SKIPPED: shared robots folder not found at %s\n", robots_dir);
    return TL_TEST_SKIP_CODE;
  }

  DIR *d = opendir(ref_dir);
  char **files = NULL;
  size_t nfiles = 0, cap = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len <= 5 || strcmp(e->d_name + len - 5, ".json") != 0) continue;
    if (nfiles == cap) {
      cap = cap ? 2 * cap : 32;
      char **grown = realloc(files, cap * sizeof *files);
      if (!grown) return 2;
      files = grown;
    }
    files[nfiles] = malloc(len + 1);
    if (!files[nfiles]) return 2;
    memcpy(files[nfiles++], e->d_name, len + 1);
  }
  if (d) closedir(d);
  if (nfiles == 0) {
    printf("SKIPPED: no *.json reference files in %s\n", ref_dir);
    free(files);
    return TL_TEST_SKIP_CODE;
  }
  qsort(files, nfiles, sizeof *files, cmp_str);

  printf("reference: %s\nrobots:    %s\nrelative error max|a-b|/max(1,max|b|), tolerance %.0e\n",
         ref_dir, robots_dir, REF_TOL);
  for (size_t i = 0; i < nfiles; ++i) {
    run_file(ref_dir, robots_dir, files[i]);
    free(files[i]);
  }
  free(files);

  int rc = tl_test_finish();
  const tl_test_counts *c = tl_test_totals();
  if (rc == 0 && c->passed == 0 && c->skipped > 0) return TL_TEST_SKIP_CODE; /* nothing tested */
  return rc;
}
