/* talus_bench: microseconds per call of the main kinematic and dynamic
 * queries of the public API, for every robot of the shared corpus and the
 * project's own quadruped, and the same for a peer engine (MuJoCo) measured
 * in the same run, on the same robots, at the same state.
 *
 *   talus_bench [SHARED_ROBOTS_DIR] [--reps N] [--batch-ms X] [--no-peer] [--json]
 *
 * SHARED_ROBOTS_DIR (default: the shared/robots folder beside the source
 * tree) is searched recursively for *.urdf; robots/talus_quadruped is added.
 * Base per robot folder (how the source projects use them): fixed for panda,
 * ur5, kuka_iiwa, double_pendulum and cartpole, floating otherwise.
 *
 * Each robot is put at one seeded random state (base in [-1,1]^2 x [0.5,1.5],
 * uniform orientation, joints uniform within their limits or in [-1, 1],
 * ball joints uniform quaternions, u ~ N(0, 1)). Each query is timed
 * (clock_gettime(CLOCK_MONOTONIC)) in N batches (default 15) of calls, each
 * batch sized to take about X ms (default 2); the figure is the median over
 * batches of the batch mean. What each column includes is printed in the
 * header: the public API caches kinematics and M/h after tl_system_set_state
 * and computes them lazily, so a query's cost depends on what is cached.
 *
 * Peer (house rule: speed targets are ratios against a peer measured in the
 * same run). When CMake finds MuJoCo (libmujoco-dev), bench/peer_mujoco.c is
 * built in (TALUS_BENCH_MUJOCO): for each robot it generates a MuJoCo model
 * from the compiled Talus model (same bodies, joints, inertials, rotor
 * inertia as armature; see peer_mujoco.c), maps the random state into
 * MuJoCo's coordinates, and before any timing cross-checks the two engines
 * at that state: body poses, M (joint block and whole), h, RNEA, forward
 * dynamics and the frame Jacobian, each as max |mujoco - talus| / max |talus|.
 * A robot whose largest difference exceeds 1e-9 is flagged MISMATCH: its
 * ratios compare different models and mean nothing. Then both engines are
 * timed with the same batch/median method, their batches interleaved (batch
 * b of every Talus and every MuJoCo query, then batch b + 1), so that a load
 * change on the machine hits both alike. Each column's MuJoCo counterpart is
 * printed in the header (MuJoCo has no ABA: its forward dynamics is CRBA +
 * sparse L^T D L + RNEA for the bias + solve; in its step, kp is a position
 * actuator, explicit, and kd joint damping, implicit in its Euler
 * integrator, where Talus's PD is implicit in both).
 *
 * Reading the ratio: ratio = MuJoCo us / Talus us for the same column, robot
 * and state; > 1 means Talus is faster, < 1 that MuJoCo is. Without MuJoCo the
 * output says that no peer was measured and has no ratios.
 *
 * Memory (house rule: memory targets too are ratios against the peer). Per
 * robot, the bytes Talus allocates for the model (tl_model_load_urdf) and
 * for a world holding that one system (tl_world_create +
 * tl_world_add_system): malloc, calloc, realloc and free are wrapped at link
 * time (bench_mem.c keeps the requested size of every live block), and the
 * bytes returned by tl_model_free / tl_world_free at the end are checked
 * against them. MuJoCo allocates inside its shared library, which the
 * wrappers do not see: its figures are its own size fields (mjModel: struct
 * + nbuffer; mjData: struct + nbuffer + nstack mjtNums). ratio = MuJoCo bytes
 * / Talus bytes.
 *
 * Contact step (bench_contact.c): the floating-base legged robots with
 * identified feet stand on a ground plane with their PD, settle for 1 s,
 * then their steps are timed in Talus (exact-cone solver) and in MuJoCo with
 * its default contact settings and with its settings against slip; the
 * contacts and the base heights of the engines are printed as a check that
 * they simulate the same standing robot.
 *
 * Derivatives (issue 24): per robot, the analytic derivatives of RNEA and
 * ABA (tl_system_inverse_dynamics_derivatives, ..._forward_dynamics_...)
 * against Talus's own centred finite differences of the same functions
 * (bench_queries.c; Talus only: MuJoCo has none, Pinocchio's published
 * figures are cited, not measured); and for ANYmal C, the DeepMimic humanoid
 * and talus_quadruped standing (contacts on), tl_world_step_derivatives
 * against MuJoCo's mjd_transitionFD on the contact step's peer model at its
 * settled state (bench_contact.c, table step_derivatives).
 *
 * This file is main: the command line, then the run (bench_find_robots,
 * bench_robot, bench_contact_robot, bench_contact_scene) and its report
 * (bench_print_table or bench_print_json); bench.h lists the other files and
 * what each does. */

#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

static const char usage[] =
    "Usage: talus_bench [SHARED_ROBOTS_DIR] [--reps N] [--batch-ms X] [--no-peer] [--only TEXT] [--no-scenes] [--json]\n"
    "\n"
    "Time the main queries of the Talus public API on every URDF under\n"
    "SHARED_ROBOTS_DIR (default " TALUS_SHARED_ROBOTS_DIR ")\n"
    "and on robots/talus_quadruped; print microseconds per call. Then the memory\n"
    "of each robot's model and world (bytes), and a step with contacts: the\n"
    "floating-base legged robots standing on a ground plane with their PD.\n"
    "When built with MuJoCo, measure its equivalents in the same run, on the same\n"
    "robots at the same state (after checking that both engines agree there) and\n"
    "print the ratios MuJoCo / Talus (> 1: Talus faster, or smaller).\n"
    "Also run as `talus bench [ARGS...]`.\n"
    "`talus_bench --batch [--help]` times batched worlds over threads instead\n"
    "(bench/bench_batch.c).\n"
    "\n"
    "  --reps N       batches per query (default 15); the median batch mean is reported\n"
    "  --batch-ms X   target duration of a batch in ms (default 2)\n"
    "  --no-peer      time Talus only\n"
    "  --only TEXT    only the robots and scenes whose label contains TEXT\n"
    "  --no-scenes    leave out the many-contact scenes (pile100, stack4x4)\n"
    "  --json         print JSON instead of the table\n";

int main(int argc, char **argv) {
  const char *dir = TALUS_SHARED_ROBOTS_DIR;
  if (argc > 1 && strcmp(argv[1], "--batch") == 0) return bench_batch_main(argc, argv, dir);
  int batches = 15, json = 0, use_peer = HAVE_PEER;
  const char *only = NULL;
  int scenes = 1;
  double batch_ms = 2.0;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (strcmp(a, "--json") == 0) {
      json = 1;
    } else if (strcmp(a, "--no-peer") == 0) {
      use_peer = 0;
    } else if (strcmp(a, "--no-scenes") == 0) {
      scenes = 0;
    } else if (strcmp(a, "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else if (strcmp(a, "--reps") == 0 && i + 1 < argc) {
      char *end = NULL;
      long v = strtol(argv[++i], &end, 10);
      if (!end || *end || v < 1 || v > 256) {
        fprintf(stderr, "talus_bench: --reps wants an integer in [1, 256], got '%s'\n", argv[i]);
        return 2;
      }
      batches = (int)v;
    } else if (strcmp(a, "--batch-ms") == 0 && i + 1 < argc) {
      char *end = NULL;
      double v = strtod(argv[++i], &end);
      if (!end || *end || !(v > 0) || !(v <= 10000)) {
        fprintf(stderr, "talus_bench: --batch-ms wants a number in (0, 10000], got '%s'\n",
                argv[i]);
        return 2;
      }
      batch_ms = v;
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage, stdout);
      return 0;
    } else if (a[0] == '-') {
      fprintf(stderr, "talus_bench: unknown option '%s'\n%s", a, usage);
      return 2;
    } else {
      dir = a;
    }
  }

  static robot_list list;
  bench_find_robots(&list, dir, only);

  static robot_result res[MAX_ROBOTS];
  for (int i = 0; i < list.n; ++i) {
    if (isatty(2)) fprintf(stderr, "\rtiming %d/%d %-60s", i + 1, list.n, list.r[i].label);
    bench_robot(&list.r[i], &res[i], batches, 1e-3 * batch_ms, use_peer);
    const contact_spec *spec = contact_spec_of(list.r[i].label);
    if (spec && list.r[i].base == TL_BASE_FLOATING) {
      if (isatty(2)) fprintf(stderr, "\rcontact step %d/%d %-54s", i + 1, list.n, list.r[i].label);
      res[i].has_contact = 1;
      bench_contact_robot(list.r[i].path, spec, &res[i].contact, batches, 1e-3 * batch_ms,
                          use_peer);
    }
  }
  static scene_result scene_res[MAX_SCENES];
  int nscene_res = 0;
  for (const bench_scene_spec *sc = bench_scenes; sc->name && nscene_res < MAX_SCENES; ++sc) {
    if (!scenes || (only && !strstr(sc->name, only))) continue;
    if (isatty(2)) fprintf(stderr, "\rcontact step, scene %-60s", sc->name);
    bench_contact_scene(sc->name, &scene_res[nscene_res++], batches, 1e-3 * batch_ms, use_peer);
  }
  if (isatty(2)) fprintf(stderr, "\r%80s\r", "");
  bench_run run = {res, list.n, scene_res, nscene_res, batches, batch_ms, use_peer};
  if (json) return bench_print_json(&run);
  bench_print_table(&run);
  return 0;
}
