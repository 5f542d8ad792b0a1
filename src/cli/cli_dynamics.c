/* `talus dynamics URDF --states FILE`: the kinematic and dynamic quantities
 * of a robot at given states, as JSON in the schema of the reference files
 * (shared/reference/README.md), so that a reference file is a valid input and
 * the output compares with it field by field. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct dyn_options {
  const char *path;   /* URDF */
  const char *states; /* states file */
  const char *out;    /* result file, NULL: stdout */
  tl_base_type base;  /* TL_BASE_AUTO: no option given */
  int verbose;
} dyn_options;

/* Parse the arguments of `dynamics`; returns -1 to continue, else an exit code. */
static int parse_dynamics_args(int argc, char **argv, dyn_options *o) {
  memset(o, 0, sizeof(*o));
  o->base = TL_BASE_AUTO;
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i], *v = NULL;
    int r;
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      fputs(cli_usage_dynamics, stdout);
      return CLI_EXIT_OK;
    } else if ((r = cli_option_value(argc, argv, &i, "--states", &v)) != 0) {
      if (r < 0) return CLI_EXIT_USAGE;
      o->states = v;
    } else if ((r = cli_option_value(argc, argv, &i, "--out", &v)) != 0) {
      if (r < 0) return CLI_EXIT_USAGE;
      o->out = v;
    } else if (cli_model_flag(arg, &o->base, &o->verbose)) {
      continue;
    } else if (arg[0] == '-' && arg[1] != '\0') {
      return cli_unknown_option("dynamics", arg);
    } else if (o->path) {
      cli_errorf("dynamics: more than one URDF given ('%s' and '%s')", o->path, arg);
      return CLI_EXIT_USAGE;
    } else {
      o->path = arg;
    }
  }
  if (!o->path || !o->states) {
    cli_errorf("dynamics: missing %s (usage: talus dynamics URDF --states FILE [--out FILE])",
               o->path ? "--states FILE" : "URDF");
    return CLI_EXIT_USAGE;
  }
  if (o->out && o->out[0] == '\0') {
    cli_errorf("option --out: empty file name");
    return CLI_EXIT_USAGE;
  }
  return -1;
}

/* ---------------------------------------------------------------- input */

typedef struct dyn_input {
  cJSON *root;          /* the parsed file (owns everything below) */
  const cJSON *states;  /* the array of states */
  double gravity[3];
  tl_base_type base;    /* from the file's "base", TL_BASE_AUTO if absent */
} dyn_input;

static const cJSON *jget(const cJSON *obj, const char *key) {
  return cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

/* Read the states file: the states array and the optional gravity and base.
 * Returns 0, or -1 after printing an error naming the file. */
static int read_input(const char *path, dyn_input *in) {
  memset(in, 0, sizeof(*in));
  in->gravity[2] = -9.81;
  in->base = TL_BASE_AUTO;
  in->root = cli_json_read_file(path, "states file");
  if (!in->root) return -1;
  if (cJSON_IsArray(in->root)) {
    in->states = in->root;
    return 0;
  }
  in->states = jget(in->root, "states");
  if (!cJSON_IsArray(in->states)) {
    cli_errorf("dynamics: %s: expected an object with a \"states\" array, or an array of "
               "states {\"q\": [...], \"u\": [...]}",
               path);
    goto fail;
  }
  const cJSON *g = jget(in->root, "gravity");
  if (g) {
    int ok = cJSON_IsArray(g) && cJSON_GetArraySize(g) == 3;
    for (int k = 0; ok && k < 3; ++k) {
      const cJSON *it = cJSON_GetArrayItem(g, k);
      ok = cJSON_IsNumber(it) && isfinite(it->valuedouble);
      if (ok) in->gravity[k] = it->valuedouble;
    }
    if (!ok) {
      cli_errorf("dynamics: %s: \"gravity\" must be an array of 3 finite numbers (m/s^2)", path);
      goto fail;
    }
  }
  const cJSON *b = jget(in->root, "base");
  if (b) {
    const char *s = cJSON_IsString(b) ? b->valuestring : NULL;
    if (s && strcmp(s, "fixed") == 0) {
      in->base = TL_BASE_FIXED;
    } else if (s && strcmp(s, "floating") == 0) {
      in->base = TL_BASE_FLOATING;
    } else {
      cli_errorf("dynamics: %s: \"base\" must be \"fixed\" or \"floating\"", path);
      goto fail;
    }
  }
  return 0;
fail:
  cJSON_Delete(in->root);
  in->root = NULL;
  return -1;
}

/* ---------------------------------------------------------- evaluation */

typedef struct dyn_eval {
  const char *file; /* states file, for messages */
  int state;        /* index of the state being evaluated */
  int reported;     /* an error has been printed */
  tl_system *sys;
  const tl_model *m;
  int nq, nv;
  double *q, *u, *zero, *M, *h, *g, *udot, *Jp, *Jr;
  tl_error err;
} dyn_eval;

static void state_errorf(dyn_eval *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void state_errorf(dyn_eval *e, const char *fmt, ...) {
  char msg[1200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  cli_errorf("dynamics: %s: state %d: %s", e->file, e->state, msg);
  e->reported = 1;
}

/* Report a failed engine call; returns 1 if st is TL_OK. */
static int api_ok(dyn_eval *e, tl_status st, const char *what) {
  if (st == TL_OK) return 1;
  state_errorf(e, "%s: %s", what, e->err.message[0] ? e->err.message : tl_status_name(st));
  memset(&e->err, 0, sizeof(e->err));
  return 0;
}

/* Copy member `key` of state `st`, an array of exactly n finite numbers, into out. */
static int read_vector(dyn_eval *e, const cJSON *st, const char *key, double *out, int n,
                       const char *dim) {
  const cJSON *arr = jget(st, key);
  if (!arr) {
    state_errorf(e, "no \"%s\" member", key);
    return -1;
  }
  if (!cJSON_IsArray(arr)) {
    state_errorf(e, "\"%s\" is not an array of numbers", key);
    return -1;
  }
  int len = cJSON_GetArraySize(arr);
  if (len != n) {
    state_errorf(e, "\"%s\" has %d numbers, but robot '%s' (%s base) has %s = %d", key, len,
                 tl_model_name(e->m), cli_base_name(tl_model_base(e->m)), dim, n);
    return -1;
  }
  int k = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, arr) {
    if (!cJSON_IsNumber(it)) {
      state_errorf(e, "%s[%d] is %s", key, k,
                   cJSON_IsNull(it) ? "null, not a number (a NaN or Inf written as null?)"
                                    : "not a number");
      return -1;
    }
    if (!isfinite(it->valuedouble)) {
      state_errorf(e, "%s[%d] is %g: expected a finite number", key, k, it->valuedouble);
      return -1;
    }
    out[k++] = it->valuedouble;
  }
  return 0;
}

/* Body `body`: link, joint, pose of the body frame and Jacobians of its origin. */
static cJSON *body_json(dyn_eval *e, int body) {
  double pos[3], R[9];
  if (!api_ok(e, tl_system_body_pose(e->sys, body, pos, R, &e->err), "tl_system_body_pose") ||
      !api_ok(e, tl_system_point_jacobian(e->sys, body, pos, e->Jp, e->Jr, e->nv, &e->err),
              "tl_system_point_jacobian"))
    return NULL;
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  int ok = cli_json_add_string(o, "link", tl_model_body_name(e->m, body)) == 0;
  ok = ok && cli_json_add_string(o, "joint", tl_model_joint_name(e->m, body)) == 0;
  ok = ok && cli_json_add_numbers(o, "pos", pos, 3) == 0;
  ok = ok && cli_json_add_numbers(o, "R", R, 9) == 0;
  ok = ok && cli_json_add_numbers(o, "Jp", e->Jp, 3 * e->nv) == 0;
  ok = ok && cli_json_add_numbers(o, "Jr", e->Jr, 3 * e->nv) == 0;
  if (!ok) cJSON_Delete(o);
  return ok ? o : NULL;
}

/* The root frame: named "ROOT" and carried by the base. */
static int is_root_frame(const tl_model *m, int f) {
  const char *name = tl_model_frame_name(m, f);
  return tl_model_frame_body(m, f) == 0 && name && strcmp(name, "ROOT") == 0;
}

/* Frame `f`: the URDF link whose frame it is, the joint it is named after
 * (null for the root link), pose. */
static cJSON *frame_json(dyn_eval *e, int f) {
  double pos[3], R[9];
  if (!api_ok(e, tl_system_frame_pose(e->sys, f, pos, R, &e->err), "tl_system_frame_pose"))
    return NULL;
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  int ok = cli_json_add_string(o, "link", tl_model_frame_link(e->m, f)) == 0;
  ok = ok && cli_json_add_string(o, "joint",
                                 is_root_frame(e->m, f) ? NULL : tl_model_frame_name(e->m, f)) == 0;
  ok = ok && cli_json_add_numbers(o, "pos", pos, 3) == 0;
  ok = ok && cli_json_add_numbers(o, "R", R, 9) == 0;
  if (!ok) cJSON_Delete(o);
  return ok ? o : NULL;
}

typedef cJSON *(*dyn_item_fn)(dyn_eval *e, int i);

/* Add array `key` with the items fn(e, i) for the i in [0, n) with take(i). */
static int add_items(cJSON *obj, const char *key, dyn_eval *e, int n, dyn_item_fn fn,
                     int (*take)(const tl_model *m, int i)) {
  cJSON *arr = cJSON_AddArrayToObject(obj, key);
  if (!arr) return -1;
  for (int i = 0; i < n; ++i) {
    if (take && !take(e->m, i)) continue;
    cJSON *item = fn(e, i);
    if (!item || !cJSON_AddItemToArray(arr, item)) {
      cJSON_Delete(item);
      return -1;
    }
  }
  return 0;
}

/* The bodies of the reference schema: those of the movable joints (a fixed
 * base, welded to the world, has none). */
static int is_movable_body(const tl_model *m, int body) {
  return tl_joint_nv(tl_model_joint_type(m, body)) > 0;
}

/* Evaluate state `st`; NULL on failure (reported unless out of memory). */
static cJSON *state_json(dyn_eval *e, const cJSON *st) {
  if (!cJSON_IsObject(st)) {
    state_errorf(e, "not an object {\"q\": [...], \"u\": [...]}");
    return NULL;
  }
  if (read_vector(e, st, "q", e->q, e->nq, "nq") != 0 ||
      read_vector(e, st, "u", e->u, e->nv, "nv") != 0)
    return NULL;
  tl_system *sys = e->sys;
  /* g = h(q, 0) first, then everything at (q, u). */
  const char *set = "tl_system_set_state";
  if (!api_ok(e, tl_system_set_state(sys, e->q, e->nq, e->zero, e->nv, &e->err), set) ||
      !api_ok(e, tl_system_nonlinear_term(sys, e->g, e->nv, &e->err), "tl_system_nonlinear_term") ||
      !api_ok(e, tl_system_set_state(sys, e->q, e->nq, e->u, e->nv, &e->err), set) ||
      !api_ok(e, tl_system_get_state(sys, e->q, e->nq, e->u, e->nv, &e->err),
              "tl_system_get_state"))
    return NULL;
  double com[3];
  if (!api_ok(e, tl_system_mass_matrix(sys, e->M, e->nv, &e->err), "tl_system_mass_matrix") ||
      !api_ok(e, tl_system_nonlinear_term(sys, e->h, e->nv, &e->err), "tl_system_nonlinear_term") ||
      !api_ok(e, tl_system_forward_dynamics(sys, e->zero, e->udot, e->nv, &e->err),
              "tl_system_forward_dynamics") ||
      !api_ok(e, tl_system_com(sys, com, &e->err), "tl_system_com"))
    return NULL;
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  int ok = cli_json_add_numbers(o, "q", e->q, e->nq) == 0;
  ok = ok && cli_json_add_numbers(o, "u", e->u, e->nv) == 0;
  ok = ok && cli_json_add_numbers(o, "M", e->M, e->nv * e->nv) == 0;
  ok = ok && cli_json_add_numbers(o, "h", e->h, e->nv) == 0;
  ok = ok && cli_json_add_numbers(o, "g", e->g, e->nv) == 0;
  ok = ok && cli_json_add_numbers(o, "udot_zero_torque", e->udot, e->nv) == 0;
  ok = ok && cli_json_add_number(o, "mass", tl_model_total_mass(e->m)) == 0;
  ok = ok && cli_json_add_numbers(o, "com", com, 3) == 0;
  ok = ok && cli_json_add_number(o, "kinetic_energy", tl_system_kinetic_energy(sys)) == 0;
  ok = ok && cli_json_add_number(o, "potential_energy", tl_system_potential_energy(sys)) == 0;
  ok = ok && add_items(o, "bodies", e, tl_model_nbody(e->m), body_json, is_movable_body) == 0;
  ok = ok && add_items(o, "frames", e, tl_model_nframe(e->m), frame_json, NULL) == 0;
  if (!ok) cJSON_Delete(o);
  return ok ? o : NULL;
}

/* Top level: the model, then the states array (filled by the caller). */
static cJSON *result_header(const tl_model *m, const double gravity[3], cJSON **states) {
  cJSON *root = cJSON_CreateObject();
  if (!root) return NULL;
  int ok = cli_json_add_string(root, "generator", "talus " TALUS_VERSION) == 0;
  ok = ok && cli_json_add_string(root, "robot", tl_model_name(m)) == 0;
  ok = ok && cli_json_add_string(root, "urdf", tl_model_source(m)) == 0;
  ok = ok && cli_json_add_string(root, "base", cli_base_name(tl_model_base(m))) == 0;
  ok = ok && cli_json_add_string(root, "root_link", tl_model_body_name(m, 0)) == 0;
  ok = ok && cli_json_add_numbers(root, "gravity", gravity, 3) == 0;
  ok = ok && cJSON_AddNumberToObject(root, "nq", tl_model_nq(m)) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "nv", tl_model_nv(m)) != NULL;
  ok = ok && cli_json_add_number(root, "total_mass", tl_model_total_mass(m)) == 0;
  cJSON *names = ok ? cJSON_AddArrayToObject(root, "joint_names") : NULL;
  ok = names != NULL;
  for (int b = 1; ok && b < tl_model_nbody(m); ++b) {
    cJSON *s = cJSON_CreateString(tl_model_joint_name(m, b));
    ok = s && cJSON_AddItemToArray(names, s);
    if (!ok) cJSON_Delete(s);
  }
  *states = ok ? cJSON_AddArrayToObject(root, "states") : NULL;
  if (!*states) {
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}

/* Evaluate every state of `in` on `model`; the result object or NULL (reported). */
static cJSON *evaluate(const tl_model *model, const dyn_input *in, const char *file) {
  dyn_eval e;
  memset(&e, 0, sizeof(e));
  e.file = file;
  e.nq = tl_model_nq(model);
  e.nv = tl_model_nv(model);
  size_t nv = (size_t)e.nv, nq = (size_t)e.nq;
  /* one block: q, u, zero, h, g, udot (nv each but q), M (nv^2), Jp, Jr (3 nv each) */
  double *buf = calloc(nq + 5 * nv + nv * nv + 6 * nv + 1, sizeof(double));
  tl_world *world = NULL;
  cJSON *root = NULL, *states = NULL;
  if (!buf) {
    cli_errorf("out of memory");
    return NULL;
  }
  e.q = buf;
  e.u = e.q + nq;
  e.zero = e.u + nv;
  e.h = e.zero + nv;
  e.g = e.h + nv;
  e.udot = e.g + nv;
  e.M = e.udot + nv;
  e.Jp = e.M + nv * nv;
  e.Jr = e.Jp + 3 * nv;
  if (tl_world_create(&world, &e.err) != TL_OK ||
      tl_world_set_gravity(world, in->gravity, &e.err) != TL_OK ||
      tl_world_add_system(world, model, &e.sys, &e.err) != TL_OK) {
    cli_errorf("dynamics: %s", e.err.message[0] ? e.err.message : tl_status_name(e.err.status));
    goto done;
  }
  e.m = tl_system_model(e.sys);
  root = result_header(e.m, in->gravity, &states);
  if (!root) {
    cli_errorf("out of memory while building JSON");
    goto done;
  }
  const cJSON *st;
  cJSON_ArrayForEach(st, in->states) {
    cJSON *item = state_json(&e, st);
    if (!item || !cJSON_AddItemToArray(states, item)) {
      if (!e.reported) cli_errorf("out of memory while building JSON");
      cJSON_Delete(item);
      cJSON_Delete(root);
      root = NULL;
      goto done;
    }
    e.state++;
  }
done:
  tl_world_free(world);
  free(buf);
  return root;
}

int cli_dynamics(int argc, char **argv) {
  dyn_options o;
  int rc = parse_dynamics_args(argc, argv, &o);
  if (rc >= 0) return rc;
  dyn_input in;
  if (read_input(o.states, &in) != 0) return CLI_EXIT_FAIL;
  tl_model *model = cli_load_model(o.path, o.base != TL_BASE_AUTO ? o.base : in.base, o.verbose);
  if (!model) {
    cJSON_Delete(in.root);
    return CLI_EXIT_FAIL;
  }
  cJSON *result = evaluate(model, &in, o.states);
  rc = result ? cli_json_write_and_free(result, o.out) : CLI_EXIT_FAIL;
  cJSON_Delete(in.root);
  tl_model_free(model);
  return rc;
}
