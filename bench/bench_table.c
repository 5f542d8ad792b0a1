/* talus_bench: the text tables, its default output (bench_print_table in
 * bench.h): the header saying what each column times and against which
 * peer, the query columns per robot (Talus, peer, ratio), the cross-check,
 * the memory table, the contact step of the legged robots and the
 * many-contact scenes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../src/math/tl_cpu.h" /* the kernels' vector width (libtalus) */
#include "bench.h"
#include "bench_mem.h"

static void print_row(int wl, const char *label, const char *base, const char *nv,
                      const char *jdof, const char *engine, const double *v, int is_ratio) {
  printf("%-*s %-8s %3s %4s %-6s", wl, label, base, nv, jdof, engine);
  for (int k = 0; k < NCOL; ++k) {
    int w = k == C_FK_CRBA ? 10 : 8;
    if (isnan(v[k]))
      printf(" %*s", w, "n/a");
    else
      printf(" %*.*f", w, is_ratio ? 2 : 3, v[k]);
  }
  putchar('\n');
}

static void print_crosscheck(const robot_result *res, int n, int wl);
static void print_memory(const robot_result *res, int n, int wl, const char *no_peer);
static void print_contact(const robot_result *res, int n, int wl, const char *no_peer);
static void print_scenes(const scene_result *sc, int nsc, const char *no_peer);
static void print_derivs(const robot_result *res, int n, int wl);
static void print_step_derivs(const robot_result *res, int n, int wl, const char *no_peer);

void bench_print_table(const bench_run *run) {
  const robot_result *res = run->res;
  int n = run->n, batches = run->batches, use_peer = run->use_peer;
  double batch_ms = run->batch_ms;
  int wl = 5;
  for (int i = 0; i < n; ++i)
    if ((int)strlen(res[i].e->label) > wl) wl = (int)strlen(res[i].e->label);
  double load;
  long ncpu;
  bench_machine_load(&load, &ncpu);
  const char *no_peer = bench_no_peer_reason(use_peer);
  printf("# talus_bench: microseconds per call, median over %d batches of the batch mean "
         "(each batch ~%g ms), one seeded random state per robot, talus " TALUS_VERSION "\n",
         batches, batch_ms);
  printf("# machine: %ld CPUs online, load average %.2f at the end of the run (a loaded "
         "machine makes the figures noisy)\n", ncpu, load);
  if (no_peer) {
    printf("# peer: NONE MEASURED: %s; Talus figures only, no ratios\n", no_peer);
  } else {
    printf("# peer: %s, measured in this run on the same robots at the same state, its batches "
           "interleaved with Talus's\n", bench_peer_label());
    printf("# ratio = %s us / Talus us, per robot and column: > 1 means Talus is faster, < 1 "
           "that the peer is\n", bench_peer_label());
    printf("# peer model: %s\n", bench_doc_peer_model());
  }
  for (int k = 0; k < NCOL; ++k) {
    printf("# %-9s %s%s\n", bench_col_head[k], no_peer ? "" : "talus:  ", bench_col_doc[k]);
    if (!no_peer) printf("# %-9s mujoco: %s\n", "", bench_doc_peer_column(k));
  }
  printf("# jdof      ancestor DOFs of that frame (non-zero columns of its Jacobian)\n");
  printf("%-*s %-8s %3s %4s %-6s", wl, "robot", "base", "nv", "jdof", "engine");
  for (int k = 0; k < NCOL; ++k) printf(" %*s", k == C_FK_CRBA ? 10 : 8, bench_col_head[k]);
  putchar('\n');
  for (int i = 0; i < n; ++i) {
    const robot_result *r = &res[i];
    const char *base = r->e->base == TL_BASE_FIXED ? "fixed" : "floating";
    if (r->error[0]) {
      printf("%-*s %-8s   -  %s\n", wl, r->e->label, base, r->error);
      continue;
    }
    char nv[16], jd[16];
    snprintf(nv, sizeof nv, "%d", r->nv);
    snprintf(jd, sizeof jd, "%d", r->frame_dofs);
    print_row(wl, r->e->label, base, nv, jd, "talus", r->us, 0);
    if (!no_peer) {
      double rat[NCOL];
      for (int k = 0; k < NCOL; ++k) rat[k] = bench_ratio(r->peer_us[k], r->us[k]);
      print_row(wl, "", "", "", "", "mujoco", r->peer_us, 0);
      print_row(wl, "", "", "", "", "ratio", rat, 1);
    }
    for (int k = 0; k < NCOL; ++k)
      if (r->failed[k][0])
        printf("#   %s: talus %s failed: %s\n", r->e->label, bench_col_head[k], r->failed[k]);
    for (int k = 0; k < NCOL; ++k)
      if (r->peer_failed[k][0])
        printf("#   %s: mujoco %s failed: %s\n", r->e->label, bench_col_head[k], r->peer_failed[k]);
    if (r->peer_error[0]) printf("#   %s: mujoco: no figures: %s\n", r->e->label, r->peer_error);
    if (r->peer_note[0]) printf("#   %s: mujoco model: %s\n", r->e->label, r->peer_note);
    if (r->peer && !(r->xcheck_max <= XCHECK_TOL))
      printf("#   %s: CROSS-CHECK MISMATCH (largest relative difference %.3g > %g): the "
             "engines disagree, so these ratios mean nothing\n",
             r->e->label, r->xcheck_max, XCHECK_TOL);
  }
  print_derivs(res, n, wl);
  if (!no_peer) print_crosscheck(res, n, wl);
  print_memory(res, n, wl, no_peer);
  print_contact(res, n, wl, no_peer);
  print_step_derivs(res, n, wl, no_peer);
  print_scenes(run->scenes, run->nscene, no_peer);
}

static void print_crosscheck(const robot_result *res, int n, int wl) {
  printf("\n# cross-check, done before timing at the benchmark state: max |mujoco - talus| / "
         "max |talus| per quantity (MuJoCo's coordinates); above %g the ratios are not "
         "comparable\n", XCHECK_TOL);
  printf("# pose: every body's world position and rotation; M(joints): the block of the "
         "non-base DOFs; M: all of it (base mapped); h: bias force; RNEA: M du + h; FD: "
         "M^-1 (tau - h); J: the frame Jacobian of the frameJ column\n");
  printf("%-*s", wl, "robot");
  for (int k = 0; k < NCHECK; ++k) printf(" %9s", bench_xcheck_head[k]);
  printf(" %9s  %s\n", "max", "verdict");
  for (int i = 0; i < n; ++i) {
    const robot_result *r = &res[i];
    printf("%-*s", wl, r->e->label);
    if (!r->peer) {
      printf(" not checked: %s\n", r->error[0] ? "Talus could not load it" : "no peer model");
      continue;
    }
    for (int k = 0; k < NCHECK; ++k) {
      if (isnan(r->xcheck[k]))
        printf(" %9s", "-");
      else
        printf(" %9.2e", r->xcheck[k]);
    }
    printf(" %9.2e  %s\n", r->xcheck_max, r->xcheck_max <= XCHECK_TOL ? "ok" : "MISMATCH");
  }
}

static void print_bytes(size_t v, int w) {
  if (v == 0)
    printf(" %*s", w, "n/a");
  else
    printf(" %*zu", w, v);
}

static void print_ratio(double v, int w) {
  if (isnan(v))
    printf(" %*s", w, "n/a");
  else
    printf(" %*.2f", w, v);
}

static void print_memory(const robot_result *res, int n, int wl, const char *no_peer) {
  printf("\n# memory: bytes allocated for one robot, measured at load / creation (before any "
         "query or step)\n# talus:  %s\n", bench_talus_mem_doc);
  if (no_peer) {
    printf("# peer: none measured (%s)\n", no_peer);
  } else {
    printf("# mujoco: %s\n", bench_doc_peer_memory());
    printf("# the MuJoCo model here is the one of the query columns: no collision geoms (the "
           "Talus model keeps its geoms and hulls; the contact step below compares models that "
           "both have them); ratio = MuJoCo bytes / Talus bytes: > 1 means Talus uses less\n");
  }
  if (!bench_mem_ok())
    printf("# WARNING: the allocation table overflowed: the Talus figures are unreliable\n");
  printf("%-*s %12s", wl, "robot", "talus_model");
  if (!no_peer) printf(" %12s %6s", "mujoco_model", "ratio");
  printf(" %12s", "talus_world");
  if (!no_peer) printf(" %12s %6s  %s", "mujoco_data", "ratio", "mujoco sizes");
  putchar('\n');
  for (int i = 0; i < n; ++i) {
    const robot_result *r = &res[i];
    printf("%-*s", wl, r->e->label);
    if (r->error[0] && r->model_bytes == 0) {
      printf(" not measured: %s\n", r->error);
      continue;
    }
    print_bytes(r->model_bytes, 12);
    if (!no_peer) {
      print_bytes(r->peer_model_bytes, 12);
      print_ratio(bench_bytes_ratio(r->peer_model_bytes, r->model_bytes), 6);
    }
    print_bytes(r->world_bytes, 12);
    if (!no_peer) {
      print_bytes(r->peer_data_bytes, 12);
      print_ratio(bench_bytes_ratio(r->peer_data_bytes, r->world_bytes), 6);
      printf("  %s", r->peer_mem_detail[0] ? r->peer_mem_detail : "-");
    }
    putchar('\n');
  }
  for (int i = 0; i < n; ++i) {
    const robot_result *r = &res[i];
    if (r->model_bytes_end != r->model_bytes && !r->error[0])
      printf("#   %s: tl_model_free returned %zu bytes, %zu were allocated by the load\n",
             r->e->label, r->model_bytes_end, r->model_bytes);
    if (r->world_bytes_end != r->world_bytes && !r->error[0])
      printf("#   %s: the world held %zu bytes after the timed queries, %zu after creation\n",
             r->e->label, r->world_bytes_end, r->world_bytes);
  }
}


static void contact_row(int wl, const char *label, const char *kp, const char *kd,
                        const char *engine, double us, int ncon, int nact, double z, size_t mb,
                        size_t wb) {
  printf("%-*s %6s %5s %-6s", wl, label, kp, kd, engine);
  if (isnan(us))
    printf(" %9s", "n/a");
  else
    printf(" %9.3f", us);
  printf(" %8d %6d", ncon, nact);
  if (isnan(z))
    printf(" %9s", "n/a");
  else
    printf(" %9.5f", z);
  print_bytes(mb, 12);
  print_bytes(wb, 12);
  putchar('\n');
}

static void contact_ratio_row(int wl, double step, double model, double world, double dz_mm,
                              const char *verdict) {
  printf("%-*s %6s %5s %-6s", wl, "", "", "", "ratio");
  print_ratio(step, 9);
  printf(" %8s %6s %9s", "", "", "");
  print_ratio(model, 12);
  print_ratio(world, 12);
  if (isnan(dz_mm))
    printf("  base_z: no comparison\n");
  else
    printf("  base_z differs by %.2f mm: %s\n", dz_mm, verdict);
}

static void print_contact(const robot_result *res, int n, int wl, const char *no_peer) {
  printf("\n# contact step: microseconds per step of a floating-base legged robot standing on "
         "the ground plane z = 0 (friction %g), started at rest at its reference configuration "
         "(joints whose limits leave out 0 moved %g inside them) with its lowest geom %g m "
         "above the ground, every joint held there by the implicit PD (kp, kd; velocity target "
         "0); %d steps to settle, then the steps are timed (median of batch means, the "
         "engines' batches interleaved) while the robot goes on standing (never reset)\n",
         CONTACT_GROUND_MU, CONTACT_LIMIT_MARGIN, CONTACT_DROP, CONTACT_SETTLE_STEPS);
  printf("# talus:  tl_world_step, dt 1 ms, tl_world_add_ground, the world's default solver: "
         "every contact solved on the exact Coulomb cone (Gauss-Seidel over contacts with "
         "NNCG acceleration, warm-started), rigid contacts, speculative within the 5 mm "
         "margin, no self-collision; the implicit PD as in the step column\n");
  if (no_peer) {
    printf("# peer: none measured (%s)\n", no_peer);
  } else {
    printf("# mujoco: %s; PD as in its step column (kp by position actuators, kd as joint "
           "damping)\n", bench_doc_peer_contact(1));
    printf("# mj-ell: %s. With MuJoCo's defaults a standing quadruped's feet creep outwards (soft "
           "friction) and its base sinks by a few mm per second (ANYmal C: 3 to 5), so its "
           "base_z drifts away from Talus's; mj-ell hardly creeps\n", bench_doc_peer_contact(2));
    printf("# ode: %s\n", bench_contact_ode_doc());
    printf("# the contact models differ (Talus: rigid, exact cone; MuJoCo: soft, pyramidal by "
           "default; ODE: maximal coordinates, contacts at penetration, friction pyramid); which "
           "is more exact is not the point: ratio = peer us / Talus us for the same robot "
           "standing on the same ground, > 1 means Talus is faster; ODE's model and world bytes "
           "are inside libode and not measured\n");
  }
  printf("# contacts: after the last step, all (Talus: speculative ones within the margin "
         "included; MuJoCo: those it passes to its solver); active: with a positive normal "
         "impulse / force. base_z: height of the base origin after the timed steps, an engine "
         "that made fewer while timed catching up untimed, so that all have simulated the same "
         "time (m); the engines within %g m of each other: the same stance (ok)\n# model / "
         "world bytes: "
         "as in the memory table, here with the collision geoms in both engines and the "
         "ground (Talus world: + tl_world_add_ground; MuJoCo: its model and mjData)\n",
         CONTACT_Z_TOL);
  printf("# left out: %s\n", contact_left_out);
  printf("%-*s %6s %5s %-6s %9s %8s %6s %9s %12s %12s\n", wl, "robot", "kp", "kd", "engine",
         "step_us", "contacts", "active", "base_z", "model_bytes", "world_bytes");
  for (int i = 0; i < n; ++i) {
    const robot_result *r = &res[i];
    if (!r->has_contact) continue;
    const contact_result *c = &r->contact;
    char kp[16], kd[16];
    snprintf(kp, sizeof kp, "%g", c->spec->kp);
    snprintf(kd, sizeof kd, "%g", c->spec->kd);
    if (c->error[0]) {
      printf("%-*s %6s %5s   talus: %s\n", wl, r->e->label, kp, kd, c->error);
      continue;
    }
    contact_row(wl, r->e->label, kp, kd, "talus", c->us, c->ncontact, c->nactive, c->z,
                c->model_bytes, c->world_bytes);
    for (int k = 0; k < CONTACT_NPEER; ++k) {
      const contact_peer_result *p = &c->peer[k];
      if (!p->attempted) continue;
      if (!p->built) {
        printf("%-*s %6s %5s %-6s no figures: %s\n", wl, "", "", "", bench_contact_engine[k], p->error);
        continue;
      }
      contact_row(wl, "", "", "", bench_contact_engine[k], p->us, p->ncontact, p->nactive, p->z,
                  p->model_bytes, p->data_bytes);
      contact_ratio_row(wl, bench_ratio(p->us, c->us), bench_bytes_ratio(p->model_bytes, c->model_bytes),
                        bench_bytes_ratio(p->data_bytes, c->world_bytes), 1e3 * fabs(p->z - c->z),
                        bench_contact_verdict(c, p));
    }
    printf("#   %s: %s; start base height %.5f m%s; talus: %d of %d active contacts on feet; "
           "%ld steps simulated (talus)",
           r->e->label, c->spec->why, c->z0,
           c->nclamped ? ", joints moved inside their limits" : "", c->nfoot, c->nactive,
           c->steps);
    for (int k = 0; k < CONTACT_NPEER; ++k)
      if (c->peer[k].built && c->peer[k].steps != c->steps)
        printf(", %ld (%s)", c->peer[k].steps, bench_contact_engine[k]);
    putchar('\n');
    if (c->failed[0]) printf("#   %s: talus step failed: %s\n", r->e->label, c->failed);
    for (int k = 0; k < CONTACT_NPEER; ++k) {
      const contact_peer_result *p = &c->peer[k];
      if (p->failed[0])
        printf("#   %s: %s step failed: %s\n", r->e->label, bench_contact_engine[k], p->failed);
      if (p->note[0]) printf("#   %s: %s model: %s\n", r->e->label, bench_contact_engine[k], p->note);
      if (p->built && k != CONTACT_ODE && !(p->xcheck_max <= XCHECK_TOL))
        printf("#   %s: %s: CROSS-CHECK MISMATCH of the dynamics at the start state (%.3g)\n",
               r->e->label, bench_contact_engine[k], p->xcheck_max);
    }
    if (c->world_bytes_end != c->world_bytes)
      printf("#   %s: the Talus world held %zu bytes after stepping, %zu after creation\n",
             r->e->label, c->world_bytes_end, c->world_bytes);
  }
}

static void scene_row(const char *label, const char *engine, double us, int ncon, int nact,
                      double drift) {
  printf("%-10s %-6s", label, engine);
  if (isnan(us))
    printf(" %10s", "n/a");
  else
    printf(" %10.1f", us);
  printf(" %8d %6d", ncon, nact);
  if (isnan(drift))
    printf(" %9s", "n/a");
  else
    printf(" %9.2e", drift);
}

static void print_scenes(const scene_result *sc, int nsc, const char *no_peer) {
  if (nsc == 0) return;
  printf("\n# contact step, many-contact scenes: microseconds per step of free boxes on the ground "
         "plane (friction %g on every pair, dt 1 ms): Talus settles the scene for its settling "
         "steps; the peer starts from Talus's settled poses (the same pile, at rest) and steps %d "
         "steps on its own before being timed (its soft contacts take the load); then both are "
         "timed as above (batches interleaved, never reset)\n",
         CONTACT_GROUND_MU, SCENE_PEER_SETTLE);
  for (int i = 0; i < nsc; ++i)
    printf("# %s: %s; %d settling steps\n", sc[i].name, sc[i].doc ? sc[i].doc : "", sc[i].settle_steps);
  printf("# talus: tl_world_step with the world's defaults (the exact-cone solver, 5 mm speculative "
         "margin); mujoco / mj-ell: the same boxes (mass, MuJoCo's box inertia) and static walls "
         "as MuJoCo geoms, condim 3, its defaults / elliptic cone with impratio 100\n"
         "# contacts, active: after the last step (as above); drift: largest distance a box "
         "moved while timed (m), a pile at rest moves little; talus: sweeps, converged and "
         "Signorini residual of the last solve\n");
  printf("%-10s %-6s %10s %8s %6s %9s\n", "scene", "engine", "step_us", "contacts", "active", "drift_m");
  for (int i = 0; i < nsc; ++i) {
    const scene_result *r = &sc[i];
    if (r->error[0]) {
      printf("%-10s talus: %s\n", r->name, r->error);
      continue;
    }
    scene_row(r->name, "talus", r->us, r->ncontact, r->nactive, r->drift);
    printf("  last solve: %d sweeps, converged %d, Signorini %.1e\n", r->sweeps, r->converged,
           r->signorini);
    for (int k = 0; k < CONTACT_NPEER && !no_peer; ++k) {
      const scene_peer_result *p = &r->peer[k];
      if (!p->built) {
        printf("%-10s %-6s no figures: %s\n", "", bench_contact_engine[k], p->error);
        continue;
      }
      scene_row("", bench_contact_engine[k], p->us, p->ncontact, p->nactive, p->drift);
      putchar('\n');
      printf("%-10s %-6s", "", "ratio");
      print_ratio(bench_ratio(p->us, r->us), 10);
      putchar('\n');
      if (p->failed[0]) printf("#   %s: %s step failed: %s\n", r->name, bench_contact_engine[k], p->failed);
    }
    if (r->failed[0]) printf("#   %s: talus step failed: %s\n", r->name, r->failed);
  }
}

static void print_us(double v, int w) {
  if (isnan(v))
    printf(" %*s", w, "n/a");
  else
    printf(" %*.*f", w, v < 1000 ? 3 : 1, v);
}

static void print_derivs(const robot_result *res, int n, int wl) {
  printf("\n# derivatives of the dynamics (issue 24): microseconds per call, Talus only (MuJoCo "
         "has no analytic derivatives), same batches as above, at the same random state\n");
  for (int k = 0; k < ND; ++k) printf("# %-9s %s\n", bench_deriv_head[k], bench_deriv_doc[k]);
  printf("# fd/an: finite differences / analytic (> 1: analytic faster; target for ABA' >= 10); "
         "ABA'/ABA: analytic ABA derivatives / one ABA (target <= 4); diff: max |fd - analytic| / "
         "max |analytic| over the matrices, RNEA and ABA (the FD and analytic columns compute the "
         "same matrices)\n# pinocchio: %s\n# vector lanes: %d (%s)\n",
         bench_deriv_published, tl_cpu_lanes(), bench_lanes_doc);
  printf("%-*s %3s %9s %9s %10s %10s %7s %7s %8s %10s %8s %8s\n", wl, "robot", "nv", "RNEA'", "ABA'",
         "FD RNEA'", "FD ABA'", "fd/an", "fd/an", "ABA'/ABA", "RNEA'/RNEA", "diff", "diff");
  printf("%-*s %3s %9s %9s %10s %10s %7s %7s %8s %10s %8s %8s\n", wl, "", "", "", "", "", "", "RNEA",
         "ABA", "", "", "RNEA", "ABA");
  for (int i = 0; i < n; ++i) {
    const robot_result *r = &res[i];
    if (r->error[0]) continue;
    printf("%-*s %3d", wl, r->e->label, r->nv);
    print_us(r->d_us[D_RNEA], 9);
    print_us(r->d_us[D_ABA], 9);
    print_us(r->d_us[D_RNEA_FD], 10);
    print_us(r->d_us[D_ABA_FD], 10);
    print_ratio(bench_ratio(r->d_us[D_RNEA_FD], r->d_us[D_RNEA]), 7);
    print_ratio(bench_ratio(r->d_us[D_ABA_FD], r->d_us[D_ABA]), 7);
    print_ratio(bench_ratio(r->d_us[D_ABA], r->us[C_ABA]), 8);
    print_ratio(bench_ratio(r->d_us[D_RNEA], r->us[C_RNEA]), 10);
    for (int k = 0; k < 2; ++k) {
      if (isnan(r->d_check[k]))
        printf(" %8s", "n/a");
      else
        printf(" %8.1e", r->d_check[k]);
    }
    putchar('\n');
    for (int k = 0; k < ND; ++k)
      if (r->d_failed[k][0])
        printf("#   %s: talus %s failed: %s\n", r->e->label, bench_deriv_head[k], r->d_failed[k]);
  }
}

static void print_step_derivs(const robot_result *res, int n, int wl, const char *no_peer) {
  int any = 0;
  for (int i = 0; i < n; ++i) any |= res[i].has_contact && res[i].contact.deriv.attempted;
  if (!any) return;
  printf("\n# step_derivatives: %s\n", bench_step_deriv_doc);
  if (no_peer)
    printf("# peer: none measured (%s)\n", no_peer);
  else
    printf("# mujoco: %s\n", bench_doc_peer_deriv());
  printf("%-*s %3s %8s %-14s %10s %10s %10s %10s %7s %7s\n", wl, "robot", "nv", "contacts",
         "talus_mode", "talus_us", "talus_fd", "mj_centred", "mj_forward", "ratio", "fwd_rat");
  for (int i = 0; i < n; ++i) {
    const robot_result *r = &res[i];
    if (!r->has_contact || !r->contact.deriv.attempted) continue;
    const step_deriv_result *d = &r->contact.deriv;
    if (d->error[0]) {
      printf("%-*s talus: no figures: %s\n", wl, r->e->label, d->error);
      continue;
    }
    printf("%-*s %3d %8d %-14s", wl, r->e->label, d->nv, d->ncontact,
           d->used == TL_DERIV_ANALYTIC ? "analytic" : "fd (fell back)");
    print_us(d->us, 10);
    print_us(d->fd_us, 10);
    print_us(d->peer_us, 10);
    print_us(d->peer_fwd_us, 10);
    print_ratio(bench_ratio(d->peer_us, d->us), 7);
    print_ratio(bench_ratio(d->peer_fwd_us, d->us), 7);
    putchar('\n');
    for (int k = 0; k < 2; ++k) {
      if (d->failed[k][0]) printf("#   %s: talus %s failed: %s\n", r->e->label, k ? "FD" : "analytic", d->failed[k]);
      if (d->peer_failed[k][0])
        printf("#   %s: mujoco %s failed: %s\n", r->e->label, k ? "forward" : "centred", d->peer_failed[k]);
    }
    if (!no_peer && !d->peer_built)
      printf("#   %s: mujoco: no figures: %s\n", r->e->label, d->peer_error[0] ? d->peer_error : "no peer model");
    printf("#   %s: one contact step %.3f us; talus FD / step = %.1f steps (6 nv + 1 = %d)\n", r->e->label,
           r->contact.us, d->fd_us / r->contact.us, 6 * d->nv + 1);
  }
}
