/* World poses of collision geoms. */
#include "contact/contact.h"
#include "math/tl_math.h"

void tl_geom_world_pose(const tl_model *m, const tl_sysdata *d, int g, double pos[3], double R[9]) {
  int b = m->geom_body[g];
  const double *xp = d->xpos + 3 * b, *xr = d->xrot + 9 * b;
  tl_m3_mulv(pos, xr, m->geom_pos + 3 * g);
  tl_v3_add(pos, pos, xp);
  tl_m3_mul(R, xr, m->geom_rot + 9 * g);
}
