/* talus_bench (the query columns, memory, contact step and scenes; --batch
 * apart): what its files share. The program is cut by what each part does:
 *
 *   bench.c           main: the command line, then discovery, timing, report
 *   bench_discover.c  finding the robots: every URDF under the robots folder
 *   bench_queries.c   one robot's query columns timed (Talus and the peer), its memory
 *   bench_timing.c    the timing loop itself (batches, interleaving, medians)
 *   bench_contact.c   the contact step of the legged robots, and the scenes
 *   bench_report.c    what the table and the JSON both say: column names and
 *                     docs, ratios, peer docs, the machine's load
 *   bench_table.c     the text tables (default output)
 *   bench_json.c      the JSON report (--json), built with cJSON
 *   bench_batch.c     --batch: batched worlds over threads (its own table and JSON)
 *
 * See bench.c for the method and bench/README.md for results. */
#ifndef TALUS_BENCH_H
#define TALUS_BENCH_H

#include <stddef.h>

#include "talus/talus.h"

#include "bench_contact.h"
#include "bench_peer.h"
#include "bench_scene.h"

#ifndef TALUS_SHARED_ROBOTS_DIR
#define TALUS_SHARED_ROBOTS_DIR "../shared/robots"
#endif
#ifndef TALUS_ROBOTS_DIR
#define TALUS_ROBOTS_DIR "robots"
#endif

#define MAX_ROBOTS 64
#define MAX_SCENES 8    /* many-contact scenes of one run (bench_scenes) */
#define XCHECK_TOL 1e-9 /* largest cross-check difference for comparable timings */

#ifdef TALUS_BENCH_MUJOCO
#define HAVE_PEER 1
#else
#define HAVE_PEER 0
#endif

/* ---- discovery (bench_discover.c) ---- */

typedef struct robot_entry {
  char path[1024];
  char label[128];
  char folder[128]; /* top folder under the robots directory */
  tl_base_type base;
} robot_entry;

typedef struct robot_list {
  robot_entry r[MAX_ROBOTS];
  int n;
} robot_list;

/* Fill l (zeroed by the caller) with every *.urdf under dir in a folder of
 * its own (recursively, sorted by path; a message on stderr when dir is not
 * a folder), then robots/talus_quadruped; label each (its top folder, or
 * folder/stem when the folder holds several URDFs) and give it its base
 * (fixed for panda, ur5, kuka_iiwa, double_pendulum and cartpole, floating
 * otherwise). only (may be NULL): keep the robots whose label contains it.
 * At most MAX_ROBOTS. */
void bench_find_robots(robot_list *l, const char *dir, const char *only);

/* ---- one robot's figures (bench_queries.c) ---- */

/* The derivative columns (issue 24 section 4; Talus only, MuJoCo has no
 * analytic derivatives): tl_system_inverse_dynamics_derivatives and
 * tl_system_forward_dynamics_derivatives, and Talus's own centred finite
 * differences of tl_system_inverse_dynamics / tl_system_forward_dynamics
 * giving the same matrices (q through tl_model_integrate, eps
 * BENCH_DERIV_EPS). */
enum { D_RNEA, D_ABA, D_RNEA_FD, D_ABA_FD, ND };

typedef struct robot_result {
  const robot_entry *e;
  int nq, nv, nbody, nframe;
  char frame[128]; /* the frame of the frame-Jacobian column */
  int frame_dofs;  /* its ancestor DOFs (non-zero Jacobian columns) */
  double us[NCOL];
  double d_us[ND];             /* the derivative columns (NAN: not measured) */
  char d_failed[ND][300];
  double d_check[2];           /* RNEA, ABA: max |fd - analytic| / max |analytic| (NAN: none) */
  char error[1100]; /* load / setup failure, empty if none */
  char failed[NCOL][300];
  /* the peer (MuJoCo), when built in */
  int peer;                    /* 1: the peer was built and timed for this robot */
  double peer_us[NCOL];
  char peer_failed[NCOL][300];
  char peer_error[1100];       /* why the peer could not be set up, empty if none */
  char peer_note[600];         /* what had to be adapted, empty if nothing */
  double xcheck[NCHECK];       /* cross-check: relative differences (bench_peer.h) */
  double xcheck_max;           /* their largest (NAN: not checked) */
  /* memory (bench_mem.h): live bytes Talus allocated for the model (at load;
   * _end: what tl_model_free returned) and for the world with this system
   * (tl_world_create + tl_world_add_system; _end: what tl_world_free
   * returned after the timing); the peer's model and data (its own fields) */
  size_t model_bytes, model_bytes_end, world_bytes, world_bytes_end;
  size_t peer_model_bytes, peer_data_bytes;
  char peer_mem_detail[300];
  /* the contact step, for the robots of contact_spec_of */
  int has_contact;
  contact_result contact;
} robot_result;

/* Load e, put it at the seeded random state (BENCH_SEED), time the NCOL
 * query columns (and the peer's, when use_peer and built with one, after the
 * cross-check; batches interleaved) with `batches` batches of about batch_s
 * seconds each, and measure its memory, into r. Failures go into r's error
 * fields; r->us[k] NAN when not measured. */
void bench_robot(const robot_entry *e, robot_result *r, int batches, double batch_s,
                 int use_peer);

/* ---- what both reports say (bench_report.c) ---- */

extern const char *const bench_col_key[NCOL];  /* JSON names of the columns */
extern const char *const bench_col_head[NCOL]; /* their table headings */
extern const char *const bench_col_doc[NCOL];  /* what each Talus column times */
extern const char *const bench_xcheck_key[NCHECK];
extern const char *const bench_xcheck_head[NCHECK];
extern const char *const bench_contact_engine[CONTACT_NPEER];     /* table names of the peers */
extern const char *const bench_contact_engine_key[CONTACT_NPEER]; /* their JSON names */
extern const char bench_talus_mem_doc[];
extern const char *const bench_deriv_key[ND];  /* JSON names of the derivative columns */
extern const char *const bench_deriv_head[ND]; /* their table headings */
extern const char *const bench_deriv_doc[ND];
extern const char bench_deriv_published[];     /* Pinocchio's published figures, cited */
extern const char bench_lanes_doc[];           /* what vector_lanes means */
extern const char bench_step_deriv_doc[];      /* the step_derivatives table */

/* peer / talus when both are finite and talus > 0, else NAN. */
double bench_ratio(double peer_us, double talus_us);
/* peer / talus bytes when both are measured (> 0), else NAN. */
double bench_bytes_ratio(size_t peer, size_t talus);
/* The 1-minute load average (< 0 if unknown) and the online CPUs. */
void bench_machine_load(double *load, long *ncpu);
/* Why there is no peer in this run (NULL: there is one). */
const char *bench_no_peer_reason(int use_peer);
/* The peer's name ("none" without one) and its docs (NULL without one). */
const char *bench_peer_label(void);
const char *bench_doc_peer_column(int k);
const char *bench_doc_peer_deriv(void); /* the peer's step derivatives (NULL without one) */
const char *bench_doc_peer_model(void);
const char *bench_doc_peer_memory(void);
const char *bench_doc_peer_contact(int variant);
/* "ok", "FELL", "DIFFERENT STANCE" or "no comparison": the peer's stance
 * against Talus's (base heights within CONTACT_Z_TOL, both above half the
 * start height). */
const char *bench_contact_verdict(const contact_result *c, const contact_peer_result *p);

/* ---- the reports: table (bench_table.c) or JSON (bench_json.c) ---- */

/* The run: its robots, its scenes and how it was timed. */
typedef struct bench_run {
  const robot_result *res;
  int n;
  const scene_result *scenes;
  int nscene;
  int batches;
  double batch_ms;
  int use_peer;
} bench_run;

/* The text tables on stdout. */
void bench_print_table(const bench_run *run);
/* The JSON report on stdout (cJSON, numbers by tl_json_number: they read
 * back exactly; NaN, Inf, unmeasured: null). 0, or 1 after a message on
 * stderr (out of memory, stdout failed). */
int bench_print_json(const bench_run *run);

/* ---- talus_bench --batch (bench_batch.c) ---- */

/* The whole --batch run: argv[1] is "--batch"; shared_dir: the default
 * robots folder. Returns the exit status. */
int bench_batch_main(int argc, char **argv, const char *shared_dir);

#endif
