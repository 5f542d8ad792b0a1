/* The restitution impact pass of a step: before the solve, sweeps over the
 * contacts with restitution > 0 give each approaching contact the impulse of
 * Newton's law of restitution on the exact cone (Guendelman, Bridson, Fedkiw,
 * "Nonconvex rigid bodies with stacking", SIGGRAPH 2003: collisions, then
 * contact; the impulse by contact/cone.c, Hwangbo et al. 2018), one contact
 * after the other, as in Newton's cradle (tl_solver_impacts below). */
#include <math.h>
#include <string.h>

#include "contact/solver_internal.h"
#include "math/tl_math.h"

/* ---------------- impact pass (restitution) ---------------- */

/* Impulse of one impact on contact block b at the current velocities: if
 * the contact approaches faster than its restitution threshold and touches
 * within the step (gap <= -v_n dt), the impulse lambda (exact cone, Delassus
 * block G without compliance) after which v_n = -e v_n and the tangential
 * velocity is stopped or slides; returns 1 and applies it, else 0. */
static int impact_pulse(tl_world *w, tl_block *b) {
  tl_native *nat = tl_native_of(w);
  tl_wcontact *c = &nat->contacts[b->contact];
  double v[3], bb[3], l[3] = {0, 0, 0};
  block_velocity(w, b, v);
  double gap = -c->depth;
  if (!(v[2] < -c->threshold) || (gap > 0 && -v[2] * w->opt.dt < gap)) return 0;
  memcpy(bb, v, sizeof(bb));
  bb[2] += c->restitution * v[2];
  tl_cone_contact_solve(b->G, bb, b->mu, l);
  if (!(l[2] > 0)) return 0;
  apply_impulse(w, b, l);
  for (int r = 0; r < 3; r++) c->impact[r] += l[r];
  return 1;
}

/* Restitution as a pass of its own before the solve, on the velocities at
 * the start of the step (Guendelman, Bridson, Fedkiw, "Nonconvex rigid bodies
 * with stacking", SIGGRAPH 2003: collisions, then contact): sweeps over the
 * contacts with restitution > 0 apply an impulse to each one that approaches
 * (impact_pulse, Newton's law on its current approach velocity), until a
 * sweep applies none. One such impulse with e = 1 and no friction keeps the
 * kinetic energy exactly (dT = lambda (v_n + G lambda / 2) = 0), so any
 * sequence of them does: an impact travels through a chain of bodies one
 * contact after the other, as in Newton's cradle, instead of being shared
 * among simultaneous contacts. The impulses use the exact Delassus block, so
 * they do not depend on the contact compliance. The step's forces are added
 * after the pass (u = u_start + impulses + (u_free - u_start)), and each
 * contact that took an impulse keeps its normal velocity after the pass as
 * the lower bound of its target in the solve, which absorbs what the forces
 * of the step (gravity) would change of it: as if the impact ended the step,
 * so that with semi-implicit Euler a bouncing body keeps its energy (the
 * integrator's invariant E - dt g . v / 2 holds across the bounce). At most
 * 10 x max_iter sweeps; what is left then is solved inelastically. */
void tl_solver_impacts(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  int any = 0;
  for (int i = 0; i < nat->ncontact; i++) { /* integrate2 may solve a step more than once */
    memset(nat->contacts[i].impact, 0, sizeof(nat->contacts[i].impact));
    any |= nat->contacts[i].restitution > 0;
  }
  if (!any) return;
  set_base(w, 1); /* the velocities at the start of the step */
  int sweeps = 0, applied = 1;
  while (applied && sweeps < 10 * w->opt.solver_max_iter) {
    applied = 0;
    for (int i = 0; i < nat->nblock; i++) {
      tl_block *b = &nat->blocks[i];
      if (b->kind != TL_ROW_CONTACT || !(nat->contacts[b->contact].restitution > 0)) continue;
      if (impact_pulse(w, b)) applied = 1, nat->stats.impacts++;
    }
    sweeps++;
  }
  nat->stats.impact_sweeps = sweeps;
  for (int i = 0; i < nat->nblock && nat->stats.impacts > 0; i++) {
    tl_block *b = &nat->blocks[i];
    const double *imp = b->kind == TL_ROW_CONTACT ? nat->contacts[b->contact].impact : NULL;
    if (!imp || (imp[0] == 0 && imp[1] == 0 && imp[2] == 0)) continue;
    double v[3];
    block_velocity(w, b, v);
    b->target[2] = fmax(b->target[2], v[2]);
    b->R = nat->contacts[b->contact].cfm; /* rigid while it ends the impact: no relative compliance */
  }
  /* the forces of the step come after the impacts: the base becomes the free
   * velocity, the impact impulses stay in z */
}

