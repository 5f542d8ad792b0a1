/* One-body floating models of primitive shapes (a box, a ball, ...), the
 * "single rigid objects" of a world. Inertias of homogeneous solids. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "math/tl_math.h"
#include "model/model.h"

/* Principal moments (about the COM, shape axes) of a homogeneous solid of
 * mass m. Capsule: a cylinder of length h plus two hemispheres, masses split
 * by volume, hemisphere COMs 3r/8 from the cap centres (parallel axis). */
static void solid_inertia(tl_geom_type t, const double *s, double m, double I[3]) {
  double r = s[0], h = s[1];
  switch (t) {
    case TL_GEOM_SPHERE: I[0] = I[1] = I[2] = 0.4 * m * r * r; break;
    case TL_GEOM_BOX:
      I[0] = m * (s[1] * s[1] + s[2] * s[2]) / 12.0;
      I[1] = m * (s[0] * s[0] + s[2] * s[2]) / 12.0;
      I[2] = m * (s[0] * s[0] + s[1] * s[1]) / 12.0;
      break;
    case TL_GEOM_CYLINDER:
      I[0] = I[1] = m * (3 * r * r + h * h) / 12.0;
      I[2] = 0.5 * m * r * r;
      break;
    default: { /* capsule */
      double vc = TL_PI * r * r * h, vs = 4.0 / 3.0 * TL_PI * r * r * r;
      double mc = m * vc / (vc + vs), ms = m - mc;
      I[2] = 0.5 * mc * r * r + 0.4 * ms * r * r;
      I[0] = I[1] = mc * (h * h / 12.0 + r * r / 4.0) + ms * (0.4 * r * r + h * h / 4.0 + 3.0 * h * r / 8.0);
      break;
    }
  }
}

tl_status tl_model_create_primitive(tl_geom_type type, const double size[3], double mass, const char *name,
                                    tl_model **out, tl_error *err) {
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  *out = NULL;
  int n = type == TL_GEOM_SPHERE ? 1 : type == TL_GEOM_BOX ? 3 : (type == TL_GEOM_CAPSULE || type == TL_GEOM_CYLINDER) ? 2 : -1;
  if (n < 0)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "type", "a primitive is a sphere, box, capsule or cylinder, not a %s",
                        tl_geom_type_name(type));
  for (int i = 0; i < n; i++)
    if (!size || !(size[i] > 0) || !isfinite(size[i]))
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "size", "size[%d] of the %s must be finite and > 0", i,
                          tl_geom_type_name(type));
  if (!(mass > 0) || !isfinite(mass))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "mass", "mass %g kg: expected a finite number > 0", mass);
  tl_model *m = tl_model_alloc(1, 7, 6, 1, 1, 1);
  if (!m) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  const char *nm = name && *name ? name : tl_geom_type_name(type);
  snprintf(m->name, TL_NAME_MAX, "%s", nm);
  snprintf(m->source, sizeof(m->source), "<primitive %s>", tl_geom_type_name(type));
  m->base = TL_BASE_FLOATING;
  m->parent[0] = -1;
  m->jnt_type[0] = TL_JOINT_FLOATING;
  m->jnt_nq[0] = 7;
  m->jnt_nv[0] = 6;
  tl_m3_identity(m->jnt_rot);
  snprintf(m->joint_name[0], TL_NAME_MAX, "ROOT");
  snprintf(m->body_name[0], TL_NAME_MAX, "%s", nm);
  m->q0[3] = 1.0;
  for (int v = 0; v < 6; v++) {
    m->dof_parent[v] = v - 1;
    m->dof_effort[v] = m->dof_velocity[v] = INFINITY;
    m->dof_lower[v] = -INFINITY;
    m->dof_upper[v] = INFINITY;
  }
  snprintf(m->frame_name[0], TL_NAME_MAX, "ROOT");
  snprintf(m->frame_link[0], TL_NAME_MAX, "%s", nm);
  tl_m3_identity(m->frame_rot);
  m->frame_jnt_type[0] = TL_JOINT_FLOATING;
  m->geom_type[0] = type;
  memcpy(m->geom_size, size, (size_t)n * sizeof(double));
  tl_m3_identity(m->geom_rot);
  snprintf(m->geom_name[0], TL_NAME_MAX, "%s", nm);
  snprintf(m->geom_link[0], TL_NAME_MAX, "%s", nm);
  snprintf(m->link_name[0], TL_NAME_MAX, "%s", nm);
  tl_m3_identity(m->link_rot);
  m->link_mass[0] = mass;
  double I[3];
  solid_inertia(type, m->geom_size, mass, I);
  for (int i = 0; i < 3; i++) m->link_inertia[4 * i] = I[i];
  tl_model_merge_links(m);
  *out = m;
  return TL_OK;
}
