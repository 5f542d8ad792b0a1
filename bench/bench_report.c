/* talus_bench: what the table (bench_table.c) and the JSON report
 * (bench_json.c) both say: the names and docs of the query columns and of
 * the cross-check, the peers' names and docs, the ratios (peer / Talus: > 1
 * means Talus is faster or smaller), the stance verdict of the contact step
 * and the machine's load. One place, so the two outputs cannot drift apart. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "bench.h"

/* ------------------------------------------------------------- columns */

/* C_FK ... NCOL: bench_peer.h */

const char *const bench_col_key[NCOL] = {"fk",  "fk_crba_h", "crba_h", "rnea",
                                          "aba", "minv",      "frame_jacobian", "step"};
const char *const bench_col_head[NCOL] = {"FK", "FK+CRBA+h", "CRBA+h", "RNEA",
                                           "ABA", "M^-1", "frameJ", "step"};
const char *const bench_col_doc[NCOL] = {
    "tl_system_set_state + tl_system_body_pose(last body): argument checks, copy of q and u, "
    "quaternion normalisation, then the whole lazy kinematics pass (body and joint frames, "
    "COM, world inertias, motion subspaces, body velocities, their time derivatives)",
    "tl_system_set_state + tl_system_mass_matrix: the FK column plus CRBA and the RNEA for h "
    "(the engine computes M and h together) and the nv x nv copy of M",
    "FK+CRBA+h minus FK (derived, not measured on its own)",
    "tl_system_inverse_dynamics(du) with kinematics cached: one RNEA pass with du, "
    "plus rotor inertia",
    "tl_system_forward_dynamics(tau) with kinematics cached: one ABA pass",
    "tl_system_inverse_mass_matrix with M cached: tree-sparse L^T D L factorisation of M "
    "and nv solves for the nv x nv inverse",
    "tl_system_frame_jacobian with kinematics cached: dense 3 x nv Jp and Jr of the last "
    "frame of a deepest body (most ancestor DOFs: column jdof)",
    "tl_world_step, dt 1 ms, no ground or static geometry (no contacts), implicit PD on the "
    "joint DOFs (kp 300, kd 10) holding the random configuration: integrate1 (kinematics, M, "
    "h, factorisation of M + dt Kd + dt^2 Kp) and integrate2 (PD, any non-contact "
    "constraints the engine enforces, integration of u and q); the state is reset to the "
    "random one between batches"};

/* The 1-minute load average and the number of online CPUs, for the header
 * (timings of a loaded machine are noisy); load < 0 if unknown. */
void bench_machine_load(double *load, long *ncpu) {
  *load = -1.0;
  *ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f) return;
  if (fscanf(f, "%lf", load) != 1) *load = -1.0;
  fclose(f);
}

const char *const bench_xcheck_key[NCHECK] = {"pose", "mass_matrix_joints", "mass_matrix",
                                                "h", "rnea", "forward_dynamics",
                                                "frame_jacobian"};
const char *const bench_xcheck_head[NCHECK] = {"pose", "M(joints)", "M", "h", "RNEA", "FD", "J"};

/* Why there is no peer in this run (NULL: there is one). */
const char *bench_no_peer_reason(int use_peer) {
  if (!HAVE_PEER)
    return "talus_bench was built without MuJoCo (install libmujoco-dev, e.g. with "
           "scripts/setup.sh, and configure again)";
  if (!use_peer) return "--no-peer was given";
  return NULL;
}

const char *bench_peer_label(void) {
#if HAVE_PEER
  return bench_peer_name();
#else
  return "none";
#endif
}

const char *bench_doc_peer_deriv(void) {
#if HAVE_PEER
  return bench_peer_deriv_doc();
#else
  return NULL;
#endif
}

const char *bench_doc_peer_column(int k) {
#if HAVE_PEER
  return bench_peer_column_doc(k);
#else
  (void)k;
  return NULL;
#endif
}

const char *bench_doc_peer_model(void) {
#if HAVE_PEER
  return bench_peer_model_doc();
#else
  return NULL;
#endif
}

const char *bench_doc_peer_memory(void) {
#if HAVE_PEER
  return bench_peer_memory_doc();
#else
  return NULL;
#endif
}

const char *bench_doc_peer_contact(int variant) {
#if HAVE_PEER
  return bench_peer_contact_doc(variant);
#else
  (void)variant;
  return NULL;
#endif
}

const char bench_talus_mem_doc[] =
    "live heap bytes of the blocks Talus allocated (malloc, calloc and realloc wrapped at link "
    "time, -Wl,--wrap, with the requested size of every live block kept; bench/bench_mem.c): "
    "model = what tl_model_load_urdf leaves allocated (the compiled tl_model, its names, "
    "frames, geoms, convex hulls and URDF extras); world = what tl_world_create + "
    "tl_world_add_system allocate (the world with its solver and collision buffers, the "
    "system's own copy of the model's mutable parameters, its state, caches and "
    "factorisation)";

double bench_bytes_ratio(size_t peer, size_t talus) {
  return peer > 0 && talus > 0 ? (double)peer / (double)talus : NAN;
}

double bench_ratio(double peer_us, double talus_us) {
  return isfinite(peer_us) && isfinite(talus_us) && talus_us > 0 ? peer_us / talus_us : NAN;
}

const char *bench_contact_verdict(const contact_result *c, const contact_peer_result *p) {
  if (!isfinite(c->z) || !isfinite(p->z)) return "no comparison";
  if (c->z < 0.5 * c->z0 || p->z < 0.5 * c->z0) return "FELL";
  return fabs(p->z - c->z) <= CONTACT_Z_TOL ? "ok" : "DIFFERENT STANCE";
}

const char *const bench_contact_engine[CONTACT_NPEER] = {"mujoco", "mj-ell", "ode"};
const char *const bench_contact_engine_key[CONTACT_NPEER] = {"mujoco", "mujoco_elliptic", "ode"};

/* ------------------------------------------------- derivative columns */

const char *const bench_deriv_key[ND] = {"rnea_derivatives", "aba_derivatives",
                                          "rnea_derivatives_fd", "aba_derivatives_fd"};
const char *const bench_deriv_head[ND] = {"RNEA'", "ABA'", "FD RNEA'", "FD ABA'"};
const char *const bench_deriv_doc[ND] = {
    "tl_system_inverse_dynamics_derivatives(du) with kinematics cached: d tau/dq (tangent "
    "space) and d tau/du, nv x nv each (Carpentier and Mansard 2018, analytic)",
    "tl_system_forward_dynamics_derivatives(tau) with kinematics cached: d du/dq, d du/du and "
    "d du/dtau = M^-1, nv x nv each (ABA, then -M^-1 times the RNEA derivatives)",
    "Talus's centred finite differences of tl_system_inverse_dynamics giving the same two "
    "matrices: q along each tangent direction (tl_model_integrate) and u entry by entry, "
    "+-1e-6, each of the 4 nv evaluations after tl_system_set_state",
    "Talus's centred finite differences of tl_system_forward_dynamics giving the same three "
    "matrices: q (tl_model_integrate) and u (4 nv evaluations, each after "
    "tl_system_set_state), then tau (2 nv evaluations), +-1e-6"};

const char bench_deriv_published[] =
    "Pinocchio's analytic derivatives, as published by Carpentier and Mansard, \"Analytical "
    "Derivatives of Rigid Body Dynamics Algorithms\", RSS 2018 (the figures cited in issue 24): "
    "about 3 us for a 7-DOF arm to 17 us for a 36-DOF humanoid, on their machine; published "
    "figures, NOT measured in this run (Pinocchio is not built here)";

const char bench_lanes_doc[] =
    "lanes of the vector kernels the ABA derivatives ran on this CPU (src/math/tl_cpu.h): 4 where "
    "the CPU has AVX, else 2 (SSE2 / NEON); the results are the same bits either way, only the "
    "speed differs";

const char bench_step_deriv_doc[] =
    "derivatives of one contact step, A = dx+/dx and B = dx+/dtau, at the contact step's settled "
    "state (the robot standing on the ground, contacts on, the PD), microseconds per call, the "
    "engines' batches interleaved; talus: tl_world_step_derivatives with TL_DERIV_ANALYTIC (the "
    "mode a user calls: analytic, contacts included when they touch static planes or box faces "
    "on the per-contact solver, else centred differences of whole steps: `used`) and with "
    "TL_DERIV_FD_CENTRED (eps 1e-6, 6 nv + 1 steps); mujoco: mjd_transitionFD on the contact "
    "step's MuJoCo model (its default contact settings) at its own settled state, centred "
    "(flg_centered 1, the fair comparison) and forward, eps 1e-6; ratio = mujoco centred us / "
    "talus us (TL_DERIV_ANALYTIC), > 1: Talus faster";
