/* Talus tests: robots from public repositories outside the corpus, tried as a
 * new user would (issue 21, "trust on first contact"). Each mode reproduces,
 * with a small URDF written here, one property that broke on such a robot:
 *
 *   geometry_extra  a <material> written inside <geometry> beside its shape
 *                   (Bullet's racecar.urdf) is ignored with a warning naming
 *                   the line, as urdfdom reads the first child only; an
 *                   unknown element without a shape is still refused.
 *   negative_limit  <limit effort="-1" velocity="-1"> (Halodi's Eve, written
 *                   for Gazebo, where a negative limit is not enforced) loads
 *                   as unlimited with a warning; a NaN is still refused.
 *
 * Usage: test_trial21 MODE
 * Exit: 0 when every check passed, 1 otherwise. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "talus/urdf.h"
#include "urdf/urdf_doc.h"

static int any_warning(const tl_urdf_doc *d, const char *a, const char *b) {
  int kept = d->nwarning < (int)(sizeof(d->warnings) / sizeof(d->warnings[0]))
                 ? d->nwarning : (int)(sizeof(d->warnings) / sizeof(d->warnings[0]));
  for (int i = 0; i < kept; i++)
    if (strstr(d->warnings[i], a) && (!b || strstr(d->warnings[i], b))) return 1;
  return 0;
}

static void geometry_extra(void) {
  static const char ok[] =
      "<robot name='r'>\n"
      "  <link name='laser'>\n"
      "    <visual><geometry>\n"
      "      <box size='0.1 0.2 0.3'/>\n"
      "      <material name='grey'/>\n"
      "    </geometry></visual>\n"
      "    <collision><geometry><sphere radius='0.05'/><origin xyz='0 0 1'/></geometry></collision>\n"
      "    <inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial>\n"
      "  </link>\n"
      "</robot>\n";
  tl_urdf_doc doc;
  tl_error err;
  memset(&err, 0, sizeof(err));
  tl_status st = tl_urdf_parse_string(ok, strlen(ok), "racecar_like.urdf", &doc, &err);
  TL_CHECK(st == TL_OK, "a <material> beside the shape in <geometry>: status %s: %s", tl_status_name(st),
           err.message);
  if (st != TL_OK) return;
  TL_CHECK(doc.nlink == 1 && doc.links[0].nvisual == 1 && doc.links[0].ngeom == 1,
           "one visual and one collision expected");
  if (doc.nlink == 1 && doc.links[0].nvisual == 1) {
    const tl_urdf_geom *v = &doc.links[0].visuals[0].geom;
    TL_CHECK(v->type == TL_GEOM_BOX && v->size[0] == 0.1 && v->size[1] == 0.2 && v->size[2] == 0.3,
             "the visual is the box 0.1 0.2 0.3 (type %d, %g %g %g)", (int)v->type, v->size[0], v->size[1],
             v->size[2]);
  }
  TL_CHECK(any_warning(&doc, "line 5", "<material>"), "no warning names line 5 and the <material>");
  TL_CHECK(any_warning(&doc, "line 7", "<origin>"), "no warning names line 7 and the <origin>");
  tl_urdf_doc_free(&doc);

  static const char bad[] =
      "<robot name='r'>\n"
      "  <link name='l'><collision><geometry>\n"
      "    <cone radius='1' length='1'/><material name='grey'/>\n"
      "  </geometry></collision></link>\n"
      "</robot>\n";
  memset(&err, 0, sizeof(err));
  st = tl_urdf_parse_string(bad, strlen(bad), "cone.urdf", &doc, &err);
  TL_CHECK(st == TL_ERR_INVALID && err.line == 3 && strstr(err.message, "unknown shape <cone>"),
           "an unknown shape alone is refused at line 3 (status %s, line %d: %s)", tl_status_name(st), err.line,
           err.message);
  if (st == TL_OK) tl_urdf_doc_free(&doc);
}

static const tl_urdf_joint *joint(const tl_urdf_doc *d, const char *name) {
  for (int i = 0; i < d->njoint; i++)
    if (strcmp(d->joints[i].name, name) == 0) return &d->joints[i];
  return NULL;
}

static void negative_limit(void) {
  static const char ok[] =
      "<robot name='r'>\n"
      "  <link name='a'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
      "  <link name='b'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
      "  <link name='c'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
      "  <joint name='hip' type='revolute'><parent link='a'/><child link='b'/><axis xyz='0 0 1'/>\n"
      "    <limit lower='-1' upper='1' effort='-1' velocity='-1'/></joint>\n"
      "  <joint name='knee' type='revolute'><parent link='b'/><child link='c'/><axis xyz='0 0 1'/>\n"
      "    <limit lower='-1' upper='1' effort='20' velocity='-1'/></joint>\n"
      "</robot>\n";
  tl_urdf_doc doc;
  tl_error err;
  memset(&err, 0, sizeof(err));
  tl_status st = tl_urdf_parse_string(ok, strlen(ok), "gazebo_limits.urdf", &doc, &err);
  TL_CHECK(st == TL_OK, "effort/velocity -1: status %s: %s", tl_status_name(st), err.message);
  if (st != TL_OK) return;
  const tl_urdf_joint *hip = joint(&doc, "hip"), *knee = joint(&doc, "knee");
  TL_CHECK(hip && isinf(hip->effort) && hip->effort > 0 && isinf(hip->velocity) && hip->velocity > 0,
           "hip: effort and velocity -1 read as unlimited (%g, %g)", hip ? hip->effort : NAN,
           hip ? hip->velocity : NAN);
  TL_CHECK(hip && hip->lower == -1 && hip->upper == 1, "hip: position limits kept");
  TL_CHECK(knee && knee->effort == 20 && isinf(knee->velocity), "knee: effort 20 kept, velocity unlimited (%g, %g)",
           knee ? knee->effort : NAN, knee ? knee->velocity : NAN);
  TL_CHECK(any_warning(&doc, "line 6", "'hip'") && any_warning(&doc, "effort -1", "unlimited"),
           "no warning names line 6, joint 'hip' and effort -1");
  TL_CHECK(any_warning(&doc, "line 8", "velocity -1") && !any_warning(&doc, "line 8", "effort"),
           "the knee's warning names its velocity only");
  tl_urdf_doc_free(&doc);

  static const char nan_limit[] =
      "<robot name='r'><link name='a'/><link name='b'/>\n"
      "  <joint name='j' type='revolute'><parent link='a'/><child link='b'/>\n"
      "    <limit lower='-1' upper='1' effort='nan' velocity='1'/></joint></robot>\n";
  memset(&err, 0, sizeof(err));
  st = tl_urdf_parse_string(nan_limit, strlen(nan_limit), "nan.urdf", &doc, &err);
  TL_CHECK(st != TL_OK && err.line == 3, "effort NaN refused at line 3 (status %s, line %d: %s)",
           tl_status_name(st), err.line, err.message);
  if (st == TL_OK) tl_urdf_doc_free(&doc);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "geometry_extra") == 0) geometry_extra();
  else if (strcmp(mode, "negative_limit") == 0) negative_limit();
  else {
    fprintf(stderr, "usage: test_trial21 geometry_extra|negative_limit\n");
    return 2;
  }
  return tl_test_finish();
}
