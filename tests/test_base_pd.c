/* Guards: src/world/system.c (floating-base PD targets, body-frame force points), src/native/step.c
 * (implicit PD and external forces in the step), src/contact/constraint_rows.c (ERP per material pair). */
/* Floating-base PD targets, external forces at body-frame points, and ERP
 * per material pair. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "talus/talus.h"
#include "test_util.h"

static tl_error err;

static tl_system *box_world(tl_world **w, double gravity_z) {
  tl_model *m = NULL;
  tl_system *s = NULL;
  double size[3] = {0.2, 0.3, 0.4}, g[3] = {0, 0, gravity_z};
  int ok = tl_model_create_primitive(TL_GEOM_BOX, size, 2.0, "box", &m, &err) == TL_OK &&
           tl_world_create(w, &err) == TL_OK && tl_world_set_gravity(*w, g, &err) == TL_OK &&
           tl_world_add_system(*w, m, &s, &err) == TL_OK;
  TL_CHECK(ok, "box world: %s", err.message);
  tl_model_free(m);
  return ok ? s : NULL;
}

/* A free box pulled by base PD gains to a target pose: position error is the
 * world-frame difference, orientation error the world-frame rotation vector. */
static void base_pd(void) {
  tl_world *w = NULL;
  tl_system *s = box_world(&w, 0.0);
  if (!s) return;
  double q[7] = {0.3, -0.2, 0.5, 1, 0, 0, 0}, u[6] = {0.1, 0, 0, 0, 0.5, 0};
  double ang = 2.0, ax[3] = {0.48, 0.6, 0.64}; /* unit axis */
  double qt[7] = {1.0, 0.5, 0.8, cos(ang / 2), ax[0] * sin(ang / 2), ax[1] * sin(ang / 2), ax[2] * sin(ang / 2)};
  double ut[6] = {0}, kp[6] = {50, 50, 50, 5, 5, 5}, kd[6] = {20, 20, 20, 1, 1, 1};
  int ok = tl_system_set_state(s, q, 7, u, 6, &err) == TL_OK && tl_system_set_pd_gains(s, kp, kd, 6, &err) == TL_OK &&
           tl_system_set_pd_targets(s, qt, 7, ut, 6, &err) == TL_OK;
  TL_CHECK(ok, "base PD setup: %s", err.message);
  for (int i = 0; ok && i < 10000; i++) ok = tl_world_step(w, &err) == TL_OK;
  TL_CHECK(ok, "base PD step: %s", err.message);
  tl_system_get_state(s, q, 7, u, 6, &err);
  double dp = sqrt(pow(q[0] - qt[0], 2) + pow(q[1] - qt[1], 2) + pow(q[2] - qt[2], 2));
  double dot = fabs(q[3] * qt[3] + q[4] * qt[4] + q[5] * qt[5] + q[6] * qt[6]);
  double dang = 2 * acos(fmin(1.0, dot));
  printf("base PD: after 10 s position error %.2e m, orientation error %.2e rad\n", dp, dang);
  TL_CHECK(dp < 1e-6, "base PD: position error %.3e m", dp);
  TL_CHECK(dang < 1e-6, "base PD: orientation error %.3e rad", dang);
  tl_world_free(w);
}

/* A force at a body-frame point equals the same force at that point in world coordinates. */
static void body_point_force(void) {
  tl_world *w1 = NULL, *w2 = NULL;
  tl_system *s1 = box_world(&w1, 0.0), *s2 = box_world(&w2, 0.0);
  if (!s1 || !s2) return;
  double q[7] = {0.1, 0.2, 0.3, cos(0.4), sin(0.4) * 0.6, 0, sin(0.4) * 0.8}, u[6] = {0};
  tl_system_set_state(s1, q, 7, u, 6, &err);
  tl_system_set_state(s2, q, 7, u, 6, &err);
  double f[3] = {3, -1, 2}, pb[3] = {0.1, 0.15, -0.2}, pos[3], R[9], pw[3];
  tl_system_body_pose(s1, 0, pos, R, &err);
  for (int i = 0; i < 3; i++) pw[i] = pos[i] + R[3 * i] * pb[0] + R[3 * i + 1] * pb[1] + R[3 * i + 2] * pb[2];
  int ok = tl_system_add_external_force_body_point(s1, 0, f, pb, &err) == TL_OK &&
           tl_system_add_external_force(s2, 0, f, pw, &err) == TL_OK && tl_world_step(w1, &err) == TL_OK &&
           tl_world_step(w2, &err) == TL_OK;
  TL_CHECK(ok, "body-point force: %s", err.message);
  double u1[6], u2[6], d = 0;
  tl_system_get_state(s1, NULL, 0, u1, 6, &err);
  tl_system_get_state(s2, NULL, 0, u2, 6, &err);
  for (int i = 0; i < 6; i++) d = fmax(d, fabs(u1[i] - u2[i]));
  TL_CHECK(d < 1e-15 && fabs(u1[4]) + fabs(u1[5]) > 1e-6, "body-point force differs from the world-point one by %.3e", d);
  double bad[3] = {NAN, 0, 0};
  TL_CHECK(tl_system_add_external_force_body_point(s1, 0, f, bad, &err) == TL_ERR_ARGUMENT, "NaN point accepted");
  tl_world_free(w1);
  tl_world_free(w2);
}

/* ERP of a material pair sets the recovery speed of its contacts: a sphere
 * 2 mm into the ground leaves it at erp * depth / dt. */
static double recovery_speed(double pair_erp) {
  tl_world *w = NULL;
  tl_model *m = NULL;
  tl_system *s = NULL;
  double r[3] = {0.1, 0, 0}, zero[3] = {0, 0, 0};
  int ok = tl_model_create_primitive(TL_GEOM_SPHERE, r, 1.0, "ball", &m, &err) == TL_OK &&
           tl_world_create(&w, &err) == TL_OK && tl_world_set_gravity(w, zero, &err) == TL_OK &&
           tl_world_add_ground(w, 0, 0.8, &err) == TL_OK && tl_world_add_system(w, m, &s, &err) == TL_OK &&
           tl_world_set_contact_compliance(w, 0, &err) == TL_OK &&
           tl_system_set_geom_material(s, 0, "ball", &err) == TL_OK &&
           tl_world_set_material_pair(w, "ball", "ground", 0.8, 0, 0.01, &err) == TL_OK;
  if (ok && pair_erp >= 0) ok = tl_world_set_material_pair_erp_cfm(w, "ball", "ground", pair_erp, 0, &err) == TL_OK;
  double q[7] = {0, 0, 0.098, 1, 0, 0, 0}, u[6] = {0};
  ok = ok && tl_system_set_state(s, q, 7, u, 6, &err) == TL_OK && tl_world_step(w, &err) == TL_OK;
  TL_CHECK(ok, "recovery: %s", err.message);
  tl_system_get_state(s, NULL, 0, u, 6, &err);
  tl_world_free(w);
  tl_model_free(m);
  return u[2];
}

static void pair_erp(void) {
  double v_world = recovery_speed(-1), v_pair = recovery_speed(0.05);
  printf("recovery speed from 2 mm deep: world erp 0.2 -> %.6f m/s, pair erp 0.05 -> %.6f m/s\n", v_world, v_pair);
  TL_CHECK_NEAR(v_world, 0.2 * 0.002 / 0.001, 1e-9, "world ERP recovery speed");
  TL_CHECK_NEAR(v_pair, 0.05 * 0.002 / 0.001, 1e-9, "pair ERP recovery speed");
  tl_world *w = NULL;
  tl_world_create(&w, &err);
  TL_CHECK(tl_world_set_material_pair_erp_cfm(w, "x", "y", 0.1, 0, &err) == TL_ERR_ARGUMENT,
           "ERP for an unknown pair accepted");
  tl_world_free(w);
}

int main(void) {
  base_pd();
  body_point_force();
  pair_erp();
  return tl_test_finish();
}
