/* Joint reaction wrenches (ODE's dJointGetFeedback, Pinocchio's data.f in
 * the joint frame): the public tl_system_joint_wrench / _wrenches, dispatched
 * to the engine serving the world (w->engine->joint_wrenches; the native
 * engine's in src/native/joint_wrench.c), and the bookkeeping they need that
 * the step must not pay for: where the user's external forces acted.
 *
 * External forces reach the step as one generalized force (s->ext, cleared
 * by the step), which no longer tells on which body and at which point a
 * force acted. So tl_system_add_external_* also note the spatial force per
 * body here, in one of two slots stamped with the world time at which they
 * were added (the start time of the step they act in): the slot of the
 * coming step and the slot of the last one. The step itself never touches
 * them; a slot belongs to the last step exactly when its stamp + dt equals
 * the world's time (the step adds dt to the time, so the equality is exact).
 * Adding forces after a step therefore keeps the last step's forces readable. */
#include <math.h>
#include <string.h>

#include "base/error.h"
#include "world/world_internal.h"

size_t tl_system_wrench_ws_size(int nbody, int nv, int nq) {
  /* the head: tl_system_joint_wrench's copy of every wrench (6 nbody); then the engine's scratch
     (from ws + 6 nbody): the q check, du, the kinematics of the step's start (xpos, xrot, xjpos,
     xjrot, xcom, cinert, cvel, cacc, cfrc per body; cdof, cdof_dot per DOF) */
  return (size_t)nq + (size_t)nv + 6 * (size_t)nbody + (3 + 9 + 3 + 9 + 3 + 10 + 6 + 6 + 6) * (size_t)nbody +
         12 * (size_t)nv;
}

void tl_system_wrench_init(tl_system *s) {
  s->ext_t[0] = s->ext_t[1] = NAN;
  s->ext_lost = NAN;
}

/* The slot stamped `t`, or -1. */
static int slot_at(const tl_system *s, double t) { return s->ext_t[0] == t ? 0 : s->ext_t[1] == t ? 1 : -1; }

void tl_system_wrench_note_external(tl_system *s, int b, const double F[6]) {
  const tl_world *w = s->world;
  int nb = s->m->nbody, i = slot_at(s, w->time);
  if (i < 0) { /* the first force of the coming step: the slot not holding the last step's */
    i = s->ext_t[0] + w->opt.dt == w->time ? 1 : 0;
    memset(s->ext_sp + 6 * (size_t)nb * (size_t)i, 0, 6 * (size_t)nb * sizeof(double));
    s->ext_t[i] = w->time;
  }
  double *d = s->ext_sp + 6 * ((size_t)nb * (size_t)i + (size_t)b);
  for (int k = 0; k < 6; k++) d[k] += F[k];
}

void tl_system_wrench_clear_external(tl_system *s) {
  int i = slot_at(s, s->world->time);
  if (i >= 0) s->ext_t[i] = NAN;
  if (s->ext_lost == s->world->time) s->ext_lost = NAN;
}

void tl_system_wrench_ext_replaced(tl_system *s) {
  s->ext_t[0] = s->ext_t[1] = NAN;
  s->ext_lost = NAN;
  for (int k = 0; k < s->m->nv; k++)
    if (s->ext[k] != 0) {
      s->ext_lost = s->world->time;
      break;
    }
}

const double *tl_system_wrench_last_external(const tl_system *s, int *lost) {
  const tl_world *w = s->world;
  *lost = s->ext_lost + w->opt.dt == w->time;
  for (int i = 0; i < 2; i++)
    if (s->ext_t[i] + w->opt.dt == w->time) return s->ext_sp + 6 * (size_t)s->m->nbody * (size_t)i;
  return NULL;
}

/* ---------------- public ---------------- */

tl_status tl_system_joint_wrenches(tl_system *s, double *out, int n, tl_error *err) {
  if (!s || !out)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "system and out must not be NULL");
  if (n != 6 * s->m->nbody)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out has length %d, expected %d (6 per joint, %d joints)",
                        n, 6 * s->m->nbody, s->m->nbody);
  tl_world *w = s->world;
  if (!w->engine->joint_wrenches)
    return tl_error_set(err, TL_ERR_UNSUPPORTED, NULL, 0, "engine",
                        "engine '%s' does not report joint reaction wrenches (tl_system_joint_wrench): use the "
                        "native engine \"talus\"", w->engine->name(w));
  return w->engine->joint_wrenches(w, s, -1, out, err);
}

tl_status tl_system_frame_wrench(tl_system *s, int frame, double f[3], double nm[3], tl_error *err) {
  if (!s) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "system", "system must not be NULL");
  if (frame < 0 || frame >= s->m->nframe)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "frame", "frame index %d out of range [0, %d)", frame,
                        s->m->nframe);
  tl_world *w = s->world;
  if (!w->engine->joint_wrenches)
    return tl_error_set(err, TL_ERR_UNSUPPORTED, NULL, 0, "engine",
                        "engine '%s' does not report joint reaction wrenches (tl_system_frame_wrench): use the "
                        "native engine \"talus\"", w->engine->name(w));
  double out[6];
  tl_status st = w->engine->joint_wrenches(w, s, frame, out, err);
  if (st) return st;
  if (f) memcpy(f, out, 3 * sizeof(double));
  if (nm) memcpy(nm, out + 3, 3 * sizeof(double));
  return TL_OK;
}

tl_status tl_system_joint_wrench(tl_system *s, int joint, double f[3], double nm[3], tl_error *err) {
  if (!s) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "system", "system must not be NULL");
  if (joint < 0 || joint >= s->m->nbody)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "joint", "joint index %d out of range [0, %d)", joint,
                        s->m->nbody);
  if (!f && !nm) return TL_OK;
  double *all = s->wrench_ws; /* its head: the engine's scratch starts after 6 nbody doubles */
  tl_status st = tl_system_joint_wrenches(s, all, 6 * s->m->nbody, err);
  if (st) return st;
  if (f) memcpy(f, all + 6 * joint, 3 * sizeof(double));
  if (nm) memcpy(nm, all + 6 * joint + 3, 3 * sizeof(double));
  return TL_OK;
}
