/* World poses of collision geoms. */
#include "contact/contact.h"
#include "math/tl_math.h"

void tl_geom_world_pose(const tl_model *m, const tl_sysdata *d, int g, double pos[3], double R[9]) {
  int b = m->geom_body[g];
  tl_geom_pose_at(m, g, d->xpos + 3 * b, d->xrot + 9 * b, pos, R);
}
