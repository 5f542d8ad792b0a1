/* Guards: src/contact/impact.c (the restitution impact pass under each solver),
 * src/contact/cone.c, src/contact/lcp_dantzig.c, src/scene/scene_load.c. */
/* Elastic contacts keep their energy (issue 11). Every scene is a world file
 * written here and loaded with tl_scene_load, so it runs with the defaults a
 * world file gets (ERP 0.2, contact compliance 3e-3, restitution threshold
 * 0.01 m/s, per-contact solver, dt 1 ms) unless a mode says otherwise.
 *
 *   bounce  a ball (r 0.1 m, 1 kg, restitution 1) dropped from 1 m bounces on
 *           the ground for 20 s: the mechanical energy at every apex (u_z
 *           turning negative) stays within 0.1 % of the first apex's, for each
 *           solver (per_contact, pgs, dantzig) and with compliance 0.
 *   cradle  Newton's cradle: zero gravity, frictionless, restitution 1, three
 *           1 kg balls of radius 0.1 m in a row, 2 mm apart (speculative
 *           contacts: inside the 5 mm margin) and 0.1 m apart, the first
 *           arriving at 5 m/s: after 0.2 s the first two are at rest and the
 *           last leaves at 5 m/s, to 1e-6, and the kinetic energy is 12.5 J to
 *           a relative 1e-6.
 *   pile    216 frictionless elastic balls (r 0.05 m, 0.1 kg) dropped from a
 *           6 x 6 x 6 grid with random offsets into a box of static walls: the
 *           total mechanical energy over 10 s stays within 0.1 % of its start
 *           value. Energy is measured with semi-implicit Euler's invariant in
 *           uniform gravity, E - (dt / 2) sum m g . v (exactly conserved by the
 *           integrator between impacts; E itself oscillates by dt g |v| / 2 per
 *           unit mass around it).
 *           Penetration stays below the 5 mm contact margin (balls faster than
 *           margin / dt can meet inside it).
 * Inelastic contacts keep their behaviour: tests/test_contact.c (restitution
 * 0: the ball stays down; the 216-sphere pile: penetration below 1 mm). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "talus/scene.h"
#include "talus/talus.h"
#include "test_util.h"

#define G 9.81
#define DT 1e-3

/* Load XML text as a world file (through a temporary file). */
static tl_world *load_world(const char *xml, tl_scene_info *info) {
  char path[] = "/tmp/talus_test_restitution_XXXXXX";
  int fd = mkstemp(path);
  if (!TL_CHECK(fd >= 0, "mkstemp")) return NULL;
  FILE *f = fdopen(fd, "w");
  fputs(xml, f);
  fclose(f);
  tl_world *w = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  memset(info, 0, sizeof *info);
  tl_status st = tl_scene_load(path, &w, info, &err);
  unlink(path);
  if (!TL_CHECK(st == TL_OK, "world file: %s", err.message)) return NULL;
  return w;
}

/* Kinetic + potential energy of a free body (q = [p, quat], u = [v, w] world). */
static double body_energy(tl_system *s, double *vz) {
  double q[7], u[6];
  tl_system_get_state(s, q, 7, u, 6, NULL);
  if (vz) *vz = u[2];
  return tl_system_kinetic_energy(s) + tl_system_potential_energy(s);
}

/* ---------------------------------------------------------------- bounce */

static void bounce(const char *solver, double compliance) {
  char xml[1024];
  snprintf(xml, sizeof xml,
           "<talus_world><solver type='%s' compliance='%g'/>"
           "<default_material friction='0.8' restitution='1'/><ground/>"
           "<object name='ball' type='sphere' size='0.1' mass='1' pos='0 0 1.1'/></talus_world>",
           solver, compliance);
  tl_scene_info info;
  tl_world *w = load_world(xml, &info);
  if (!w) return;
  tl_system *s = info.systems[0].system;
  tl_error err;
  memset(&err, 0, sizeof err);
  double vz, vz_prev = 0, e0 = NAN, worst = 0;
  int napex = 0, ok = 1;
  for (int k = 0; ok && k < 20000; k++) {
    ok = tl_world_step(w, &err) == TL_OK;
    double e = body_energy(s, &vz);
    if (vz_prev > 0 && vz <= 0) { /* apex */
      if (napex++ == 0) e0 = e;
      worst = fmax(worst, fabs(e - e0) / e0);
    }
    vz_prev = vz;
  }
  TL_CHECK(ok, "bounce %s: %s", solver, err.message);
  printf("bounce, solver %s, compliance %g: %d apexes in 20 s, apex energy within %.3g of the first (%.6g J)\n",
         solver, compliance, napex, worst, e0);
  TL_CHECK(napex >= 18, "bounce %s: only %d apexes in 20 s", solver, napex);
  TL_CHECK(worst <= 1e-3, "bounce %s compliance %g: apex energy drifts by %.3g (> 0.1 %%)", solver, compliance,
           worst);
  tl_scene_info_free(&info);
  tl_world_free(w);
}

/* ---------------------------------------------------------------- cradle */

static void cradle(double gap) {
  char xml[2048];
  double r = 0.1, x2 = 2 * r + gap, x3 = 2 * x2;
  snprintf(xml, sizeof xml,
           "<talus_world><gravity xyz='0 0 0'/><default_material friction='0' restitution='1'/>"
           "<object name='b1' type='sphere' size='0.1' mass='1' pos='0 0 1' vel='5 0 0' friction='0'/>"
           "<object name='b2' type='sphere' size='0.1' mass='1' pos='%.17g 0 1' friction='0'/>"
           "<object name='b3' type='sphere' size='0.1' mass='1' pos='%.17g 0 1' friction='0'/></talus_world>",
           x2, x3);
  tl_scene_info info;
  tl_world *w = load_world(xml, &info);
  if (!w) return;
  tl_error err;
  memset(&err, 0, sizeof err);
  int ok = 1;
  for (int k = 0; ok && k < 200; k++) ok = tl_world_step(w, &err) == TL_OK;
  TL_CHECK(ok, "cradle: %s", err.message);
  double v[3], e = 0;
  for (int i = 0; i < 3; i++) {
    double q[7], u[6];
    tl_system_get_state(info.systems[i].system, q, 7, u, 6, NULL);
    v[i] = u[0];
    e += tl_system_kinetic_energy(info.systems[i].system);
  }
  printf("cradle, balls %g m apart: velocities after 0.2 s %.9f %.9f %.9f m/s, energy %.12g J (rel err %.2e)\n",
         gap, v[0], v[1], v[2], e, fabs(e - 12.5) / 12.5);
  TL_CHECK(fabs(v[0]) < 1e-6 && fabs(v[1]) < 1e-6 && fabs(v[2] - 5) < 1e-6,
           "cradle %g m: velocities %.9g %.9g %.9g, want 0 0 5", gap, v[0], v[1], v[2]);
  TL_CHECK(fabs(e - 12.5) <= 1e-6 * 12.5, "cradle %g m: energy %.12g J, want 12.5", gap, e);
  tl_scene_info_free(&info);
  tl_world_free(w);
}

/* ------------------------------------------------------------------ pile */

/* Energy of every system, as integrator invariant (see the header). */
static double pile_energy(const tl_scene_info *info) {
  double e = 0;
  for (int i = 0; i < info->nsystem; i++) {
    double vz;
    e += body_energy(info->systems[i].system, &vz);
    e -= 0.5 * DT * G * 0.1 * vz; /* - (dt/2) m G v_z, m = 0.1 */
  }
  return e;
}

static char *pile_xml(double restitution, double friction) {
  size_t cap = 1 << 17, len = 0;
  char *x = malloc(cap);
  len += (size_t)snprintf(x + len, cap - len,
                          "<talus_world><default_material friction='%g' restitution='%g'/><ground friction='%g'/>"
                          "<static type='box' size='0.1 1.0 2' pos='-0.45 0 1' friction='%g'/>"
                          "<static type='box' size='0.1 1.0 2' pos='0.45 0 1' friction='%g'/>"
                          "<static type='box' size='1.0 0.1 2' pos='0 -0.45 1' friction='%g'/>"
                          "<static type='box' size='1.0 0.1 2' pos='0 0.45 1' friction='%g'/>",
                          friction, restitution, friction, friction, friction, friction, friction);
  uint64_t r = 12345;
  for (int i = 0; i < 216; i++) {
    double p[3];
    for (int a = 0; a < 3; a++) {
      r = r * 6364136223846793005ull + 1442695040888963407ull;
      p[a] = ((double)(r >> 11) / 9007199254740992.0 - 0.5) * 0.01;
    }
    len += (size_t)snprintf(x + len, cap - len,
                            "<object type='sphere' size='0.05' mass='0.1' friction='%g' pos='%.6f %.6f %.6f'/>", friction,
                            -0.3 + 0.12 * (i % 6) + p[0], -0.3 + 0.12 * ((i / 6) % 6) + p[1],
                            0.3 + 0.12 * (i / 36) + p[2]);
  }
  snprintf(x + len, cap - len, "</talus_world>");
  return x;
}

static void pile(void) {
  char *xml = pile_xml(1.0, 0.0);
  tl_scene_info info;
  tl_world *w = load_world(xml, &info);
  free(xml);
  if (!w) return;
  tl_error err;
  memset(&err, 0, sizeof err);
  double e0 = pile_energy(&info), worst = 0, pen = 0;
  int ok = 1, impacts = 0;
  for (int k = 0; ok && k < 10000; k++) {
    ok = tl_world_step(w, &err) == TL_OK;
    double e = pile_energy(&info);
    worst = fmax(worst, fabs(e - e0) / e0);
    tl_solver_stats st;
    tl_world_solver_stats(w, &st, NULL);
    impacts += st.impacts;
    for (int c = 0; c < tl_world_ncontact(w); c++) {
      tl_contact_info ci;
      if (tl_world_contact(w, c, &ci, NULL) == TL_OK) pen = fmax(pen, ci.depth);
    }
  }
  TL_CHECK(ok, "pile: %s", err.message);
  printf("pile of 216 elastic balls, 10 s: energy within %.3g of the start (%.6g J), %d impacts, penetration "
         "%.3g m\n", worst, e0, impacts, pen);
  TL_CHECK(worst <= 1e-3, "elastic pile: energy drifts by %.3g (> 0.1 %%)", worst);
  /* balls faster than margin / dt (5 m/s) can meet inside the speculative margin's reach */
  TL_CHECK(pen < 5e-3, "elastic pile: penetration %.3g m beyond the contact margin", pen);
  tl_scene_info_free(&info);
  tl_world_free(w);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "bounce") == 0) {
    bounce("per_contact", 3e-3);
    bounce("per_contact", 0);
    bounce("pgs", 3e-3);
    bounce("dantzig", 3e-3);
  } else if (strcmp(mode, "cradle") == 0) {
    cradle(0.002);
    cradle(0.1);
  } else if (strcmp(mode, "pile") == 0) {
    pile();
  } else {
    fprintf(stderr, "usage: test_restitution bounce|cradle|pile\n");
    return 2;
  }
  return tl_test_finish();
}
