/* Narrowphase against a horizontal plane: sphere, capsule, box, cylinder. */
#include <string.h>

#include "contact/contact.h"
#include "math/tl_math.h"

int tl_geom_max_plane_contacts(tl_geom_type type) {
  switch (type) {
    case TL_GEOM_SPHERE: return 1;
    case TL_GEOM_CAPSULE: return 2;
    case TL_GEOM_BOX: return 8;
    case TL_GEOM_CYLINDER: return 8;
    default: return 0;
  }
}

void tl_geom_world_pose(const tl_model *m, const tl_sysdata *d, int g, double pos[3], double R[9]) {
  int b = m->geom_body[g];
  const double *xp = d->xpos + 3 * b, *xr = d->xrot + 9 * b;
  tl_m3_mulv(pos, xr, m->geom_pos + 3 * g);
  tl_v3_add(pos, pos, xp);
  tl_m3_mul(R, xr, m->geom_rot + 9 * g);
}

/* Add the contact of world point p (radius r around it) if closer than margin. */
static int add_point(const tl_model *m, int g, const double p[3], double r, double height,
                     double margin, tl_contact *out) {
  double phi = p[2] - r - height;
  if (phi >= margin) return 0;
  memset(out, 0, sizeof(*out));
  out->body = m->geom_body[g];
  out->geom = g;
  tl_v3_set(out->pos, p[0], p[1], p[2] - r);
  tl_v3_set(out->ground, p[0], p[1], height);
  double frame[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  memcpy(out->frame, frame, sizeof(frame));
  out->depth = -phi;
  return 1;
}

static int box_points(const tl_model *m, int g, const double c[3], const double R[9], double height,
                      double margin, tl_contact *out) {
  const double *s = m->geom_size + 3 * g;
  int n = 0;
  for (int i = 0; i < 8; i++) {
    double local[3] = {(i & 1 ? 0.5 : -0.5) * s[0], (i & 2 ? 0.5 : -0.5) * s[1],
                       (i & 4 ? 0.5 : -0.5) * s[2]};
    double p[3];
    tl_m3_mulv(p, R, local);
    tl_v3_add(p, p, c);
    n += add_point(m, g, p, 0.0, height, margin, out + n);
  }
  return n;
}

/* Rim points of both caps: the deepest one, the opposite one and the two at
 * 90 degrees, so a cylinder standing on a cap gets a 4-point manifold and one
 * lying on its side gets a point per cap. */
static int cylinder_points(const tl_model *m, int g, const double c[3], const double R[9],
                           double height, double margin, tl_contact *out) {
  double r = m->geom_size[3 * g], half = 0.5 * m->geom_size[3 * g + 1];
  double a[3] = {R[2], R[5], R[8]}, down[3] = {0, 0, -1}, e1[3], e2[3];
  /* e1: the component of "down" perpendicular to the axis */
  tl_v3_copy(e1, down);
  tl_v3_addscl(e1, a, -tl_v3_dot(a, down));
  if (tl_v3_normalize(e1) < 1e-9) tl_v3_set(e1, R[0], R[3], R[6]); /* upright: any radial axis */
  tl_v3_cross(e2, a, e1);
  int n = 0;
  for (int cap = -1; cap <= 1; cap += 2) {
    double e[3];
    tl_v3_copy(e, c);
    tl_v3_addscl(e, a, cap * half);
    const double dirs[4][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
    for (int k = 0; k < 4; k++) {
      double p[3];
      tl_v3_copy(p, e);
      tl_v3_addscl(p, e1, r * dirs[k][0]);
      tl_v3_addscl(p, e2, r * dirs[k][1]);
      n += add_point(m, g, p, 0.0, height, margin, out + n);
    }
  }
  return n;
}

int tl_collide_plane(const tl_model *m, const tl_sysdata *d, int g, double height, double margin,
                     tl_contact *out) {
  double c[3], R[9];
  tl_geom_world_pose(m, d, g, c, R);
  const double *s = m->geom_size + 3 * g;
  switch (m->geom_type[g]) {
    case TL_GEOM_SPHERE:
      return add_point(m, g, c, s[0], height, margin, out);
    case TL_GEOM_CAPSULE: {
      int n = 0;
      for (int cap = -1; cap <= 1; cap += 2) {
        double e[3] = {c[0] + cap * 0.5 * s[1] * R[2], c[1] + cap * 0.5 * s[1] * R[5],
                       c[2] + cap * 0.5 * s[1] * R[8]};
        n += add_point(m, g, e, s[0], height, margin, out + n);
      }
      return n;
    }
    case TL_GEOM_BOX:
      return box_points(m, g, c, R, height, margin, out);
    case TL_GEOM_CYLINDER:
      return cylinder_points(m, g, c, R, height, margin, out);
    default:
      return 0;
  }
}
