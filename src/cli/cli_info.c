/* `talus info URDF`: print the compiled model (tables or JSON). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct info_options {
  const char *path;
  tl_base_type base;
  int json;
  int verbose;
} info_options;

/* Parse the arguments of `info`; returns -1 to continue, else an exit code. */
static int parse_info_args(int argc, char **argv, info_options *o) {
  memset(o, 0, sizeof(*o));
  o->base = TL_BASE_AUTO;
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      fputs(cli_usage_info, stdout);
      return CLI_EXIT_OK;
    } else if (strcmp(arg, "--json") == 0) {
      o->json = 1;
    } else if (cli_model_flag(arg, &o->base, &o->verbose)) {
      continue;
    } else if (arg[0] == '-' && arg[1] != '\0') {
      return cli_unknown_option("info", arg);
    } else if (o->path) {
      cli_errorf("info: more than one URDF given ('%s' and '%s')", o->path, arg);
      return CLI_EXIT_USAGE;
    } else {
      o->path = arg;
    }
  }
  if (!o->path) {
    cli_errorf("info: missing URDF (usage: talus info URDF [--json])");
    return CLI_EXIT_USAGE;
  }
  return -1;
}

/* Number of meaningful entries of a geom's size vector (see tl_geom_type). */
static int geom_size_count(tl_geom_type type) {
  switch (type) {
    case TL_GEOM_SPHERE: return 1;
    case TL_GEOM_BOX: return 3;
    case TL_GEOM_CAPSULE:
    case TL_GEOM_CYLINDER: return 2;
    case TL_GEOM_MESH: return 3;
    default: return 0;
  }
}

static const char *or_dash(const char *s) { return (s && s[0]) ? s : "-"; }

/* ---------------------------------------------------------------- JSON */

static cJSON *joint_json(const tl_model *m, int b) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  int parent = tl_model_body_parent(m, b);
  int ok = cJSON_AddNumberToObject(o, "index", b) != NULL;
  ok = ok && cli_json_add_string(o, "name", tl_model_joint_name(m, b)) == 0;
  ok = ok && cli_json_add_string(o, "type", tl_joint_type_name(tl_model_joint_type(m, b))) == 0;
  ok = ok && cli_json_add_string(o, "body", tl_model_body_name(m, b)) == 0;
  ok = ok && cli_json_add_string(o, "parent", parent >= 0 ? tl_model_body_name(m, parent) : NULL) == 0;
  ok = ok && cJSON_AddNumberToObject(o, "q_index", tl_model_joint_q_index(m, b)) != NULL;
  ok = ok && cJSON_AddNumberToObject(o, "u_index", tl_model_joint_u_index(m, b)) != NULL;
  ok = ok && cJSON_AddNumberToObject(o, "mass", tl_model_body_mass(m, b)) != NULL;
  if (!ok) cJSON_Delete(o);
  return ok ? o : NULL;
}

static cJSON *frame_json(const tl_model *m, int f) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  int body = tl_model_frame_body(m, f);
  int ok = cli_json_add_string(o, "name", tl_model_frame_name(m, f)) == 0;
  ok = ok && cli_json_add_string(o, "body", tl_model_body_name(m, body)) == 0;
  ok = ok && cli_json_add_string(o, "joint_type",
                                 tl_joint_type_name(tl_model_frame_joint_type(m, f))) == 0;
  if (!ok) cJSON_Delete(o);
  return ok ? o : NULL;
}

static cJSON *geom_json(const tl_model *m, int g) {
  tl_geom_type type = TL_GEOM_SPHERE;
  int body = -1;
  double size[3] = {0, 0, 0}, pos[3], R[9];
  if (tl_model_geom(m, g, &type, &body, size, pos, R, NULL) != 0) return NULL;
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  int ok = cli_json_add_string(o, "name", tl_model_geom_name(m, g)) == 0;
  ok = ok && cli_json_add_string(o, "link", tl_model_geom_link(m, g)) == 0;
  ok = ok && cli_json_add_string(o, "type", tl_geom_type_name(type)) == 0;
  ok = ok && cli_json_add_string(o, "body", tl_model_body_name(m, body)) == 0;
  ok = ok && cli_json_add_numbers(o, "size", size, geom_size_count(type)) == 0;
  if (!ok) cJSON_Delete(o);
  return ok ? o : NULL;
}

static const char *loop_type_name(int type) {
  return type == TL_CONSTRAINT_BALL ? "ball" : type == TL_CONSTRAINT_HINGE ? "hinge" : "weld";
}

/* Constraint rows of every <loop_joint> of the model. */
static int loop_rows(const tl_model *m) {
  int rows = 0;
  for (int i = 0; i < tl_model_nloop(m); ++i) {
    tl_loop_info l;
    if (tl_model_loop(m, i, &l, NULL) == TL_OK) rows += l.nrow;
  }
  return rows;
}

static cJSON *loop_json(const tl_model *m, int i) {
  tl_loop_info l;
  if (tl_model_loop(m, i, &l, NULL) != TL_OK) return NULL;
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  int ok = cli_json_add_string(o, "name", l.name) == 0;
  ok = ok && cli_json_add_string(o, "type", loop_type_name(l.type)) == 0;
  ok = ok && cli_json_add_string(o, "link1", l.link1) == 0;
  ok = ok && cli_json_add_string(o, "link2", l.link2) == 0;
  ok = ok && cli_json_add_numbers(o, "xyz1", l.pos1, 3) == 0;
  ok = ok && cli_json_add_numbers(o, "rpy1", l.rpy1, 3) == 0;
  ok = ok && cli_json_add_numbers(o, "xyz2", l.pos2, 3) == 0;
  ok = ok && cli_json_add_numbers(o, "rpy2", l.rpy2, 3) == 0;
  if (l.type == TL_CONSTRAINT_HINGE) ok = ok && cli_json_add_numbers(o, "axis", l.axis, 3) == 0;
  ok = ok && cJSON_AddNumberToObject(o, "rows", l.nrow) != NULL;
  ok = ok && cJSON_AddNumberToObject(o, "line", l.line) != NULL;
  if (!ok) cJSON_Delete(o);
  return ok ? o : NULL;
}

typedef cJSON *(*item_fn)(const tl_model *m, int i);

/* Add array `key` with items fn(m, 0..n-1). */
static int add_item_array(cJSON *root, const char *key, const tl_model *m, int n, item_fn fn) {
  cJSON *arr = cJSON_AddArrayToObject(root, key);
  if (!arr) return -1;
  for (int i = 0; i < n; ++i) {
    cJSON *item = fn(m, i);
    if (!item || !cJSON_AddItemToArray(arr, item)) {
      cJSON_Delete(item);
      return -1;
    }
  }
  return 0;
}

static int add_warnings(cJSON *root, const tl_model *m) {
  cJSON *arr = cJSON_AddArrayToObject(root, "warnings");
  if (!arr) return -1;
  for (int i = 0; i < tl_model_nwarning(m); ++i) {
    cJSON *s = cJSON_CreateString(tl_model_warning(m, i));
    if (!s || !cJSON_AddItemToArray(arr, s)) {
      cJSON_Delete(s);
      return -1;
    }
  }
  return 0;
}

/* The default configuration (tl_model_default_q) as "default_gc" [nq]. */
static int add_default_q(cJSON *root, const tl_model *m) {
  int nq = tl_model_nq(m);
  double *q = malloc((size_t)(nq > 0 ? nq : 1) * sizeof(double));
  int rc = q && tl_model_default_q(m, q, nq, NULL) == TL_OK ? cli_json_add_numbers(root, "default_gc", q, nq) : -1;
  free(q);
  return rc;
}

static cJSON *info_json(const tl_model *m) {
  cJSON *root = cJSON_CreateObject();
  if (!root) return NULL;
  int ok = cli_json_add_string(root, "robot", tl_model_name(m)) == 0;
  ok = ok && cli_json_add_string(root, "urdf", tl_model_source(m)) == 0;
  ok = ok && cli_json_add_string(root, "base", cli_base_name(tl_model_base(m))) == 0;
  ok = ok && cJSON_AddNumberToObject(root, "gc_dim", tl_model_nq(m)) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "dof", tl_model_nv(m)) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "nbody", tl_model_nbody(m)) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "total_mass", tl_model_total_mass(m)) != NULL;
  ok = ok && add_item_array(root, "joints", m, tl_model_nbody(m), joint_json) == 0;
  ok = ok && add_item_array(root, "frames", m, tl_model_nframe(m), frame_json) == 0;
  ok = ok && add_item_array(root, "geoms", m, tl_model_ngeom(m), geom_json) == 0;
  ok = ok && add_item_array(root, "loops", m, tl_model_nloop(m), loop_json) == 0;
  ok = ok && cJSON_AddNumberToObject(root, "loop_rows", loop_rows(m)) != NULL;
  ok = ok && add_default_q(root, m) == 0;
  ok = ok && add_warnings(root, m) == 0;
  if (!ok) cJSON_Delete(root);
  return ok ? root : NULL;
}

/* ---------------------------------------------------------------- text */

/* Widest of the strings name(m, 0..n-1), at least `min`. */
static int name_width(const tl_model *m, int n, const char *(*name)(const tl_model *, int),
                      int min) {
  int w = min;
  for (int i = 0; i < n; ++i) {
    const char *s = name(m, i);
    int len = s ? (int)strlen(s) : 1;
    if (len > w) w = len;
  }
  return w;
}

static void print_summary(const tl_model *m) {
  printf("robot       %s\n", or_dash(tl_model_name(m)));
  printf("urdf        %s\n", or_dash(tl_model_source(m)));
  printf("base        %s\n", cli_base_name(tl_model_base(m)));
  printf("gc_dim (nq) %d\n", tl_model_nq(m));
  printf("dof (nv)    %d\n", tl_model_nv(m));
  printf("bodies      %d\n", tl_model_nbody(m));
  printf("total mass  %.6g kg\n", tl_model_total_mass(m));
}

static void print_joints(const tl_model *m) {
  int n = tl_model_nbody(m);
  int wj = name_width(m, n, tl_model_joint_name, 5);
  int wb = name_width(m, n, tl_model_body_name, 6);
  printf("\njoints (%d; body i is carried by joint i)\n", n);
  printf("  %3s  %-*s  %-9s  %-*s  %3s  %3s  %-*s  %10s\n", "idx", wj, "joint", "type", wb,
         "parent", "q", "u", wb, "body", "mass [kg]");
  for (int b = 0; b < n; ++b) {
    int p = tl_model_body_parent(m, b);
    printf("  %3d  %-*s  %-9s  %-*s  %3d  %3d  %-*s  %10.6g\n", b, wj,
           or_dash(tl_model_joint_name(m, b)), tl_joint_type_name(tl_model_joint_type(m, b)), wb,
           p >= 0 ? or_dash(tl_model_body_name(m, p)) : "-", tl_model_joint_q_index(m, b),
           tl_model_joint_u_index(m, b), wb, or_dash(tl_model_body_name(m, b)),
           tl_model_body_mass(m, b));
  }
}

/* Each scalar DOF's limits and its default coordinate (tl_model_default_q). */
static void print_default_q(const tl_model *m) {
  int nq = tl_model_nq(m), n = tl_model_nbody(m);
  double *q = malloc((size_t)(nq > 0 ? nq : 1) * sizeof(double));
  if (!q || tl_model_default_q(m, q, nq, NULL) != TL_OK) {
    free(q);
    return;
  }
  int wj = name_width(m, n, tl_model_joint_name, 5);
  printf("\ndefault configuration (inside the joint limits: 0 clamped into [lower + %g r, "
         "upper - %g r], r = upper - lower; rad or m)\n", TL_DEFAULT_Q_MARGIN, TL_DEFAULT_Q_MARGIN);
  printf("  %-*s  %3s  %10s  %10s  %10s\n", wj, "joint", "q", "lower", "upper", "default");
  for (int b = 1; b < n; ++b) {
    tl_joint_type t = tl_model_joint_type(m, b);
    if (t == TL_JOINT_SPHERICAL || t == TL_JOINT_FLOATING) continue;
    for (int i = 0; i < tl_joint_nv(t); ++i) {
      double lo, hi;
      int qi = tl_model_joint_q_index(m, b) + i;
      tl_model_dof_limits(m, tl_model_joint_u_index(m, b) + i, &lo, &hi, NULL);
      printf("  %-*s  %3d  %10.6g  %10.6g  %10.6g\n", wj, or_dash(tl_model_joint_name(m, b)), qi, lo,
             hi, q[qi]);
    }
  }
  free(q);
}

static void print_frames(const tl_model *m) {
  int n = tl_model_nframe(m);
  int wf = name_width(m, n, tl_model_frame_name, 5);
  printf("\nframes (%d)\n", n);
  printf("  %4s  %-*s  %-9s  %s\n", "idx", wf, "frame", "joint", "body");
  for (int f = 0; f < n; ++f)
    printf("  %4d  %-*s  %-9s  %s\n", f, wf, or_dash(tl_model_frame_name(m, f)),
           tl_joint_type_name(tl_model_frame_joint_type(m, f)),
           or_dash(tl_model_body_name(m, tl_model_frame_body(m, f))));
}

static void print_geom_row(const tl_model *m, int g, int wg, int wl) {
  tl_geom_type type = TL_GEOM_SPHERE;
  int body = -1;
  double size[3] = {0, 0, 0}, pos[3], R[9];
  if (tl_model_geom(m, g, &type, &body, size, pos, R, NULL) != 0) return;
  printf("  %4d  %-*s  %-*s  %-8s  %-*s ", g, wg, or_dash(tl_model_geom_name(m, g)), wl,
         or_dash(tl_model_geom_link(m, g)), tl_geom_type_name(type), wl,
         or_dash(tl_model_body_name(m, body)));
  for (int k = 0; k < geom_size_count(type); ++k) printf(" %.6g", size[k]);
  putchar('\n');
}

static void print_geoms(const tl_model *m) {
  int n = tl_model_ngeom(m);
  int wg = name_width(m, n, tl_model_geom_name, 4);
  int wl = name_width(m, n, tl_model_geom_link, 4);
  int wb = name_width(m, tl_model_nbody(m), tl_model_body_name, 4);
  if (wb > wl) wl = wb;
  printf("\ncollision geoms (%d; size: sphere r, box x y z, capsule/cylinder r l, mesh scale)\n",
         n);
  printf("  %4s  %-*s  %-*s  %-8s  %-*s  %s\n", "idx", wg, "geom", wl, "link", "type", wl, "body",
         "size [m]");
  for (int g = 0; g < n; ++g) print_geom_row(m, g, wg, wl);
}

/* The <loop_joint> loops: each closes a loop of the tree with constraint
 * rows, so nv - rows is a lower bound of the closed robot's mobility (equal to
 * it when the rows are independent; a planar loop closed by a ball has a
 * redundant out-of-plane row and keeps one more DOF than the count says). */
static void print_loops(const tl_model *m) {
  int n = tl_model_nloop(m);
  if (n == 0) return;
  int rows = loop_rows(m);
  printf("\nloop joints (%d; %d constraint rows; nv - rows = %d, a lower bound of the mobility: redundant "
         "rows, such as the out-of-plane rows of a planar loop, remove no DOF)\n", n, rows,
         tl_model_nv(m) - rows);
  int wn = 4, wl = 5;
  for (int i = 0; i < n; ++i) {
    tl_loop_info l;
    if (tl_model_loop(m, i, &l, NULL) != TL_OK) continue;
    if ((int)strlen(l.name) > wn) wn = (int)strlen(l.name);
    if ((int)strlen(l.link1) > wl) wl = (int)strlen(l.link1);
    if ((int)strlen(l.link2) > wl) wl = (int)strlen(l.link2);
  }
  printf("  %3s  %-*s  %-5s  %-*s  %-*s  %4s\n", "idx", wn, "loop", "type", wl, "link1", wl, "link2", "rows");
  for (int i = 0; i < n; ++i) {
    tl_loop_info l;
    if (tl_model_loop(m, i, &l, NULL) != TL_OK) continue;
    printf("  %3d  %-*s  %-5s  %-*s  %-*s  %4d\n", i, wn, l.name, loop_type_name(l.type), wl, l.link1, wl, l.link2,
           l.nrow);
  }
}

static void print_warnings(const tl_model *m) {
  int n = tl_model_nwarning(m);
  if (n == 0) return;
  printf("\nwarnings (%d)\n", n);
  for (int i = 0; i < n; ++i) printf("  %s\n", tl_model_warning(m, i));
}

static void print_info_text(const tl_model *m) {
  print_summary(m);
  print_joints(m);
  print_default_q(m);
  print_frames(m);
  print_geoms(m);
  print_loops(m);
  print_warnings(m);
}

int cli_info(int argc, char **argv) {
  info_options o;
  int rc = parse_info_args(argc, argv, &o);
  if (rc >= 0) return rc;
  tl_model *model = cli_load_model(o.path, o.base, o.verbose);
  if (!model) return CLI_EXIT_FAIL;
  if (o.json) {
    rc = cli_json_print_and_free(info_json(model));
  } else {
    print_info_text(model);
    rc = fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
  }
  tl_model_free(model);
  return rc;
}
