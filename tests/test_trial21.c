/* Guards: urdf/urdf_parse.c (geometry_extra, visual_materials, xml_version, repeated_copy,
 * zero_visual, negative_limit), urdf/urdf_compile.c (density,
 * mimic_default, singular_root), src/model/model.c (locked_default), src/cli/cli_sim_report.c (tilt), controllers/trot.c (trot_feet). */
/* Talus tests: robots from public repositories outside the corpus, tried as a
 * new user would (issue 21, "trust on first contact"). Each mode reproduces,
 * with a small URDF written here, one property that broke on such a robot:
 *
 *   geometry_extra  a <material> written inside <geometry> beside its shape
 *                   (Bullet's racecar.urdf) is ignored with a warning naming
 *                   the line, as urdfdom reads the first child only; an
 *                   unknown element without a shape is still refused.
 *   visual_materials
 *                   a <visual> with several <material> children (Unitree's
 *                   Go2, B2, B2W, H1-2 and G1 hand descriptions: one per
 *                   COLLADA sub-material; they were refused as "second
 *                   <material>") loads with the first, as urdfdom reads it,
 *                   and a warning naming the visual's line; a second
 *                   <inertial> in a link is still refused.
 *   xml_version     <?xml version="0.0" ?> (about thirty files of PyBullet's
 *                   data, Minitaur among them, refused by libxml2 as
 *                   "Unsupported version") loads as 1.0 with a warning, a
 *                   longer value too, and the lines of later errors are
 *                   unchanged; a one-character version is still refused.
 *   repeated_copy   a joint that repeats its <axis xyz="0 1 0"/> (Ghost
 *                   Robotics' Spirit 40 in PyBullet's data, refused as
 *                   "second <axis>") loads with a warning naming both lines,
 *                   as does an exact copy of an <origin> with its attributes
 *                   in another order; a second <axis> or <limit> that differs
 *                   is still refused (which one to use would be a guess).
 *   zero_visual     <visual> markers of size 0 (PyBullet's Laikago toes:
 *                   <sphere radius="0.0"/>, refused as "expected a size > 0")
 *                   load, dropped with a warning: they draw nothing; the
 *                   link keeps its other visuals and its collision sphere; a
 *                   collision box of size 0 and a negative visual size are
 *                   still refused (a collision sphere of radius 0, or a box of
 *                   size 0 0 0, is a point contact: test_engine points).
 *   negative_limit  <limit effort="-1" velocity="-1"> (Halodi's Eve, written
 *                   for Gazebo, where a negative limit is not enforced) loads
 *                   as unlimited with a warning; a NaN is still refused.
 *   density         a link whose mass no material could have in its collision
 *                   geometry (a Barrett hand's fingers: grams written as kg,
 *                   56 t each) gets a model warning naming file, line, link
 *                   and density, for primitives and mesh hulls (an OBJ cube
 *                   written to a temporary folder); a plausible link and a
 *                   placeholder box under 1 cm^3 (PR2's base_footprint) none.
 *   mimic_default   the default configuration puts a <mimic> leader where its
 *                   followers are inside their limits when its range allows
 *                   (Robotiq 2F-85: followers at multiplier -1 with limits
 *                   [0, 0.8757] started at -0.036 rad, outside them, for the
 *                   whole run); a conflict no leader value solves keeps the
 *                   leader's own clamp.
 *   locked_default  a revolute joint locked by its limits, lower = upper =
 *                   1 rad (Unitree's G1 with BrainCo hands: the fingertips),
 *                   starts at 1 rad (it started at 0, 1 rad outside, and the
 *                   limit rows pulled it in), and stays there under gravity;
 *                   its neighbour with lower < upper keeps the usual clamp.
 *   singular_root   a floating robot whose mass matrix is singular at its
 *                   root (Bullet's hinge.urdf: a massless base, PyBullet's
 *                   "static" convention) is refused naming the root <link>'s
 *                   line (the message had no line), and `talus simulate`
 *                   names the file once (it was printed twice).
 *   tilt            a slab lying flat on its face (pitch pi/2, the Z-Y-X
 *                   gimbal lock) reports max_roll_pitch_rad pi/2 whichever
 *                   side it came from (Unitree's H1 lying on its back was
 *                   reported at 3.13 rad, "upside down"); upside down is pi.
 *   trot_feet       a quadruped with a fifth leaf body (the project's
 *                   talus_quadruped with a movable tail) is refused by trot
 *                   with a message saying how to name the feet, and trots
 *                   forward with trot:feet=LF_FOOT/RF_FOOT/LH_FOOT/RH_FOOT
 *                   (the command line had no way to name them: Minitaur,
 *                   Vision60); a feet list of two names is refused, one of
 *                   four 27-character names is read (was "too long").
 *
 * Usage: test_trial21 MODE [TALUS_CLI [SOURCE_DIR]]
 * Exit: 0 when every check passed, 1 otherwise. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"
#include "talus/model.h"
#include "talus/urdf.h"
#include "talus/world.h"
#include "urdf/urdf_doc.h"

static int any_warning(const tl_urdf_doc *d, const char *a, const char *b) {
  int kept = d->nwarning < (int)(sizeof(d->warnings) / sizeof(d->warnings[0]))
                 ? d->nwarning : (int)(sizeof(d->warnings) / sizeof(d->warnings[0]));
  for (int i = 0; i < kept; i++)
    if (strstr(d->warnings[i], a) && (!b || strstr(d->warnings[i], b))) return 1;
  return 0;
}

/* Parse text: 1 if it loads (doc filled, to be freed), else 0 and err filled. */
static int parses(const char *text, tl_urdf_doc *doc, tl_error *err) {
  memset(err, 0, sizeof(*err));
  return tl_urdf_parse_string(text, strlen(text), "trial21.urdf", doc, err) == TL_OK;
}

/* The text just parsed (ok, doc, err) is refused with `status` at `line`, its message holding
 * `needle`; what: the case, for the failure message. */
static void expect_refused(int ok, tl_urdf_doc *doc, const tl_error *err, tl_status status, int line,
                           const char *needle, const char *what) {
  TL_CHECK(!ok && err->status == status && err->line == line && strstr(err->message, needle),
           "%s is refused at line %d (status %s, line %d: %s)", what, line, tl_status_name(err->status), err->line,
           err->message);
  if (ok) tl_urdf_doc_free(doc);
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
  expect_refused(parses(bad, &doc, &err), &doc, &err, TL_ERR_INVALID, 3, "unknown shape <cone>", "an unknown shape alone");
}

static const tl_urdf_joint *joint(const tl_urdf_doc *d, const char *name) {
  for (int i = 0; i < d->njoint; i++)
    if (strcmp(d->joints[i].name, name) == 0) return &d->joints[i];
  return NULL;
}

static void visual_materials(void) {
  static const char ok[] =
      "<robot name='r'>\n"
      "  <link name='base'>\n"
      "    <visual><geometry><box size='0.4 0.2 0.1'/></geometry>\n"
      "      <material name='rubber'><color rgba='0.1 0.2 0.3 1'/></material>"
      "<material name='logo'><color rgba='1 1 1 1'/></material>\n"
      "      <material name='sticker'><color rgba='0 0 0 1'/></material>\n"
      "    </visual>\n"
      "    <collision><geometry><box size='0.4 0.2 0.1'/></geometry></collision>\n"
      "    <inertial><mass value='6'/><inertia ixx='0.02' iyy='0.09' izz='0.1' ixy='0' ixz='0' iyz='0'/>"
      "</inertial>\n"
      "  </link>\n"
      "</robot>\n";
  tl_urdf_doc doc;
  tl_error err;
  memset(&err, 0, sizeof(err));
  tl_status st = tl_urdf_parse_string(ok, strlen(ok), "go2_like.urdf", &doc, &err);
  TL_CHECK(st == TL_OK, "three <material> in one <visual>: status %s: %s", tl_status_name(st), err.message);
  if (st != TL_OK) return;
  TL_CHECK(doc.nlink == 1 && doc.links[0].nvisual == 1, "one visual expected");
  if (doc.nlink == 1 && doc.links[0].nvisual == 1) {
    const tl_urdf_visual *v = &doc.links[0].visuals[0];
    TL_CHECK(v->has_material && v->material.has_color && v->material.rgba[0] == 0.1 &&
                 v->material.rgba[1] == 0.2 && v->material.rgba[2] == 0.3,
             "the first material (rubber, 0.1 0.2 0.3) is used: has %d, rgba %g %g %g", v->has_material,
             v->material.rgba[0], v->material.rgba[1], v->material.rgba[2]);
  }
  TL_CHECK(any_warning(&doc, "line 3", "3 <material>"), "no warning names line 3 and the 3 <material>");
  tl_urdf_doc_free(&doc);

  static const char bad[] =
      "<robot name='r'>\n"
      "  <link name='l'>\n"
      "    <inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial>\n"
      "    <inertial><mass value='2'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial>\n"
      "  </link>\n"
      "</robot>\n";
  expect_refused(parses(bad, &doc, &err), &doc, &err, TL_ERR_INVALID, 4, "second <inertial>", "a second <inertial>");
}

static void xml_version(void) {
  static const char body[] =
      "<robot name='r'>\n"
      "  <link name='a'><inertial><mass value='1'/>"
      "<inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
      "</robot>\n";
  static const char *const versions[3] = {"0.0", "10.0", "1.0"};
  for (int k = 0; k < 3; k++) {
    char text[512];
    snprintf(text, sizeof(text), "<?xml version=\"%s\" ?>\n%s", versions[k], body);
    tl_urdf_doc doc;
    tl_error err;
    int ok = parses(text, &doc, &err);
    TL_CHECK(ok, "version \"%s\": %s", versions[k], err.message);
    if (!ok) continue;
    int warned = any_warning(&doc, "version", "read as 1.0");
    TL_CHECK(warned == (k < 2), "version \"%s\": warning %d, expected %d", versions[k], warned, k < 2);
    TL_CHECK(doc.nlink == 1 && doc.links[0].line == 3, "version \"%s\": link at line %d, expected 3",
             versions[k], doc.nlink == 1 ? doc.links[0].line : -1);
    tl_urdf_doc_free(&doc);
  }
  /* a later error keeps its line */
  static const char bad_later[] =
      "<?xml version='0.0'?>\n"
      "<robot name='r'>\n"
      "  <link name='a'/>\n"
      "  <joint name='j' type='revolute'><parent link='a'/><child link='zz'/></joint>\n"
      "</robot>\n";
  tl_urdf_doc doc;
  tl_error err;
  int ok = parses(bad_later, &doc, &err);
  expect_refused(ok, &doc, &err, TL_ERR_INVALID, 4, "zz", "the unknown child link, after version 0.0,");
  ok = parses("<?xml version=\"2\"?>\n<robot name='r'><link name='a'/></robot>\n", &doc, &err);
  TL_CHECK(!ok && err.status == TL_ERR_PARSE && strstr(err.message, "malformed XML"),
           "version \"2\" is still refused (%s)", err.message);
  if (ok) tl_urdf_doc_free(&doc);
}

/* A one-joint robot whose joint holds the elements `extra` (line 4 on). */
static int joint_with(const char *extra, tl_urdf_doc *doc, tl_error *err) {
  char text[1024];
  snprintf(text, sizeof(text),
           "<robot name='r'>\n"
           "  <link name='a'/><link name='b'><inertial><mass value='1'/>"
           "<inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
           "  <joint name='knee' type='revolute'><parent link='a'/><child link='b'/>\n"
           "%s"
           "  </joint>\n"
           "</robot>\n",
           extra);
  return parses(text, doc, err);
}

static void repeated_copy(void) {
  tl_urdf_doc doc;
  tl_error err;
  int ok = joint_with("    <axis xyz='0 1 0'/><limit lower='0' upper='3' effort='5' velocity='9'/>\n"
                      "    <axis xyz='0 1 0'/>\n", &doc, &err);
  TL_CHECK(ok, "a repeated identical <axis>: %s", err.message);
  if (ok) {
    TL_CHECK(doc.njoint == 1 && doc.joints[0].axis[1] == 1.0 && doc.joints[0].axis[0] == 0.0,
             "the axis is 0 1 0");
    TL_CHECK(any_warning(&doc, "line 5: <axis>", "line 4"), "no warning names lines 5 and 4");
    tl_urdf_doc_free(&doc);
  }
  ok = joint_with("    <origin xyz='0 0 0.3' rpy='0 0 1'/>\n    <origin rpy='0 0 1' xyz='0 0 0.3'/>\n", &doc, &err);
  TL_CHECK(ok, "an <origin> copied with its attributes in another order: %s", err.message);
  if (ok) {
    TL_CHECK(doc.joints[0].origin.xyz[2] == 0.3, "the origin is 0 0 0.3");
    tl_urdf_doc_free(&doc);
  }
  ok = joint_with("    <axis xyz='0 1 0'/>\n    <axis xyz='1 0 0'/>\n", &doc, &err);
  expect_refused(ok, &doc, &err, TL_ERR_INVALID, 5, "second <axis>", "two different axes");
  ok = joint_with("    <limit lower='0' upper='3' effort='5' velocity='9'/>\n"
                  "    <limit lower='0' upper='3' effort='5' velocity='9' extra='1'/>\n", &doc, &err);
  expect_refused(ok, &doc, &err, TL_ERR_INVALID, 5, "second <limit>", "a <limit> with one more attribute");
}

/* A one-link robot: `geoms` (line 3 on) inside the link. */
static int link_with(const char *geoms, tl_urdf_doc *doc, tl_error *err) {
  char text[1024];
  snprintf(text, sizeof(text),
           "<robot name='r'>\n"
           "  <link name='toe'><inertial><mass value='0.1'/><inertia ixx='1e-5' iyy='1e-5' izz='1e-5' ixy='0' "
           "ixz='0' iyz='0'/></inertial>\n%s  </link>\n</robot>\n", geoms);
  return parses(text, doc, err);
}

static void zero_visual(void) {
  tl_urdf_doc doc;
  tl_error err;
  int ok = link_with("    <visual><geometry><sphere radius='0.0'/></geometry></visual>\n"
                     "    <visual><geometry><box size='0.1 0 0.1'/></geometry></visual>\n"
                     "    <visual><geometry><sphere radius='0.02'/></geometry></visual>\n"
                     "    <collision><geometry><sphere radius='0.03'/></geometry></collision>\n", &doc, &err);
  TL_CHECK(ok, "visuals of size 0: %s", err.message);
  if (ok) {
    TL_CHECK(doc.nlink == 1 && doc.links[0].nvisual == 1 && doc.links[0].visuals[0].geom.size[0] == 0.02,
             "one visual kept, the 0.02 sphere (%d)", doc.links[0].nvisual);
    TL_CHECK(doc.links[0].ngeom == 1 && doc.links[0].geoms[0].size[0] == 0.03, "the collision sphere kept");
    TL_CHECK(any_warning(&doc, "line 3: <visual>", "<sphere> of size 0"), "no warning names line 3's sphere");
    TL_CHECK(any_warning(&doc, "line 4: <visual>", "<box> of size 0"), "no warning names line 4's box");
    tl_urdf_doc_free(&doc);
  }
  /* (a collision sphere of radius 0 is a point contact: test_engine points) */
  ok = link_with("    <collision><geometry><box size='0.1 0 0.1'/></geometry></collision>\n", &doc, &err);
  expect_refused(ok, &doc, &err, TL_ERR_INVALID, 3, "expected three edge lengths > 0",
                 "a collision box with an edge of 0");
  ok = link_with("    <collision><geometry><box size='0 0 0'/></geometry></collision>\n", &doc, &err);
  TL_CHECK(ok && doc.links[0].ngeom == 1 && doc.links[0].geoms[0].type == TL_GEOM_SPHERE &&
               doc.links[0].geoms[0].size[0] == 0 && any_warning(&doc, "line 3: <box", "point contact"),
           "a collision box of size 0 0 0 is a point contact, with a warning (%s)", ok ? "" : err.message);
  if (ok) tl_urdf_doc_free(&doc);
  ok = link_with("    <visual><geometry><cylinder radius='-0.1' length='1'/></geometry></visual>\n", &doc, &err);
  expect_refused(ok, &doc, &err, TL_ERR_INVALID, 3, "expected a size > 0", "a visual cylinder of radius -0.1");
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

static int model_warning(const tl_model *m, const char *a, const char *b) {
  for (int i = 0; i < tl_model_nwarning(m); i++) {
    const char *w = tl_model_warning(m, i);
    if (w && strstr(w, a) && (!b || strstr(w, b))) return 1;
  }
  return 0;
}

/* A cube of edge 2 cm as OBJ (8 vertices, 12 triangles): 8e-6 m^3. */
static const char k_cube_obj[] =
    "v -0.01 -0.01 -0.01\nv 0.01 -0.01 -0.01\nv 0.01 0.01 -0.01\nv -0.01 0.01 -0.01\n"
    "v -0.01 -0.01 0.01\nv 0.01 -0.01 0.01\nv 0.01 0.01 0.01\nv -0.01 0.01 0.01\n"
    "f 1 3 2\nf 1 4 3\nf 5 6 7\nf 5 7 8\nf 1 2 6\nf 1 6 5\n"
    "f 2 3 7\nf 2 7 6\nf 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n";

static void density(void) {
  char dir[] = "/tmp/talus_trial21_XXXXXX";
  if (!mkdtemp(dir)) {
    TL_CHECK(0, "mkdtemp failed");
    return;
  }
  char obj[128], urdf[128];
  snprintf(obj, sizeof(obj), "%s/cube.obj", dir);
  snprintf(urdf, sizeof(urdf), "%s/hand.urdf", dir);
  FILE *f = fopen(obj, "w");
  if (f) fputs(k_cube_obj, f), fclose(f);
  f = fopen(urdf, "w");
  if (f) {
    fputs("<robot name='hand'>\n"
          "  <link name='palm'>\n" /* steel: 7.8 kg/dm^3 in a 1 dm cube */
          "    <inertial><mass value='7.8'/><inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial>\n"
          "    <collision><geometry><box size='0.1 0.1 0.1'/></geometry></collision>\n"
          "  </link>\n"
          "  <link name='finger_mesh'>\n" /* 56 t in the 2 cm OBJ cube: 7e9 kg/m^3 */
          "    <inertial><mass value='56143'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial>\n"
          "    <collision><geometry><mesh filename='cube.obj'/></geometry></collision>\n"
          "  </link>\n"
          "  <link name='finger_box'>\n" /* 31 t in a 2 cm box */
          "    <inertial><mass value='31321'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial>\n"
          "    <collision><geometry><box size='0.02 0.02 0.02'/></geometry></collision>\n"
          "  </link>\n"
          "  <link name='footprint'>\n" /* PR2's placeholder: 1 kg in a 1 mm box, not judged */
          "    <inertial><mass value='1'/><inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial>\n"
          "    <collision><geometry><box size='0.001 0.001 0.001'/></geometry></collision>\n"
          "  </link>\n"
          "  <joint name='f' type='fixed'><parent link='palm'/><child link='footprint'/></joint>\n"
          "  <joint name='a' type='revolute'><parent link='palm'/><child link='finger_mesh'/>\n"
          "    <limit lower='-1' upper='1' effort='1' velocity='1'/></joint>\n"
          "  <joint name='b' type='revolute'><parent link='palm'/><child link='finger_box'/>\n"
          "    <limit lower='-1' upper='1' effort='1' velocity='1'/></joint>\n"
          "</robot>\n", f);
    fclose(f);
  }
  tl_model *m = NULL;
  tl_error err;
  memset(&err, 0, sizeof(err));
  tl_status st = tl_model_load_urdf(urdf, NULL, &m, &err);
  TL_CHECK(st == TL_OK, "hand.urdf loads (a warning, not an error): %s", err.message);
  if (st == TL_OK) {
    TL_CHECK(model_warning(m, "hand.urdf:6: link 'finger_mesh'", "denser than any material"),
             "no warning names hand.urdf:6 and link 'finger_mesh'");
    TL_CHECK(model_warning(m, "finger_mesh", "8e-06 m^3"), "the mesh link's volume is the OBJ cube's 8e-06 m^3");
    TL_CHECK(model_warning(m, "hand.urdf:10: link 'finger_box'", "3.92e+09 kg/m^3"),
             "no warning names hand.urdf:10, link 'finger_box' and 3.92e+09 kg/m^3");
    TL_CHECK(!model_warning(m, "'palm'", NULL), "the steel palm is plausible: no warning");
    TL_CHECK(!model_warning(m, "'footprint'", NULL), "a 1 mm placeholder box is not judged: no warning");
    for (int i = 0; i < tl_model_nwarning(m); i++) printf("warning: %s\n", tl_model_warning(m, i));
  }
  tl_model_free(m);
  remove(obj);
  remove(urdf);
  rmdir(dir);
}

static const char *k_gripper =
    "<robot name='gripper'>\n"
    "  <link name='palm'><inertial><mass value='1'/><inertia ixx='1e-3' iyy='1e-3' izz='1e-3' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
    "  <link name='lead'><inertial><mass value='0.1'/><inertia ixx='1e-5' iyy='1e-5' izz='1e-5' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
    "  <link name='neg'><inertial><mass value='0.1'/><inertia ixx='1e-5' iyy='1e-5' izz='1e-5' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
    "  <link name='pos'><inertial><mass value='0.1'/><inertia ixx='1e-5' iyy='1e-5' izz='1e-5' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
    "  <link name='lead2'><inertial><mass value='0.1'/><inertia ixx='1e-5' iyy='1e-5' izz='1e-5' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
    "  <link name='shift'><inertial><mass value='0.1'/><inertia ixx='1e-5' iyy='1e-5' izz='1e-5' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
    "  <link name='lead3'><inertial><mass value='0.1'/><inertia ixx='1e-5' iyy='1e-5' izz='1e-5' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
    "  <link name='apart'><inertial><mass value='0.1'/><inertia ixx='1e-5' iyy='1e-5' izz='1e-5' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
    "  <joint name='lead' type='revolute'><parent link='palm'/><child link='lead'/><axis xyz='0 1 0'/>\n"
    "    <limit lower='0' upper='0.725' effort='10' velocity='1'/></joint>\n"
    "  <joint name='neg' type='revolute'><parent link='palm'/><child link='neg'/><axis xyz='0 1 0'/>\n"
    "    <limit lower='0' upper='0.8757' effort='10' velocity='1'/><mimic joint='lead' multiplier='-1'/></joint>\n"
    "  <joint name='pos' type='revolute'><parent link='palm'/><child link='pos'/><axis xyz='0 1 0'/>\n"
    "    <limit lower='0' upper='0.8757' effort='10' velocity='1'/><mimic joint='lead' multiplier='1'/></joint>\n"
    /* a follower whose range needs the leader at 0.525 or more (with margins) */
    "  <joint name='lead2' type='revolute'><parent link='palm'/><child link='lead2'/><axis xyz='0 1 0'/>\n"
    "    <limit lower='0' upper='1' effort='10' velocity='1'/></joint>\n"
    "  <joint name='shift' type='revolute'><parent link='palm'/><child link='shift'/><axis xyz='0 1 0'/>\n"
    "    <limit lower='0.5' upper='1' effort='10' velocity='1'/><mimic joint='lead2' multiplier='1'/></joint>\n"
    /* no leader value puts this follower inside its limits: the leader keeps its own clamp */
    "  <joint name='lead3' type='revolute'><parent link='palm'/><child link='lead3'/><axis xyz='0 1 0'/>\n"
    "    <limit lower='0' upper='1' effort='10' velocity='1'/></joint>\n"
    "  <joint name='apart' type='revolute'><parent link='palm'/><child link='apart'/><axis xyz='0 1 0'/>\n"
    "    <limit lower='2' upper='3' effort='10' velocity='1'/><mimic joint='lead3' multiplier='1'/></joint>\n"
    "</robot>\n";

static double joint_q(const tl_model *m, const double *q, const char *name) {
  int nb = tl_model_nbody(m);
  for (int b = 1; b < nb; b++)
    if (strcmp(tl_model_joint_name(m, b), name) == 0) return q[tl_model_joint_q_index(m, b)];
  return NAN;
}

static void mimic_default(void) {
  tl_load_options o = tl_load_options_default();
  o.base = TL_BASE_FIXED;
  tl_model *m = NULL;
  tl_error err;
  memset(&err, 0, sizeof(err));
  tl_status st = tl_model_load_urdf_any(k_gripper, &o, &m, &err);
  TL_CHECK(st == TL_OK, "gripper loads: %s", err.message);
  if (st != TL_OK) return;
  int nq = tl_model_nq(m);
  double q[16];
  TL_CHECK(nq == 7 && tl_model_default_q(m, q, nq, &err) == TL_OK, "nq %d, default q: %s", nq, err.message);
  if (nq == 7) {
    double lead = joint_q(m, q, "lead"), neg = joint_q(m, q, "neg"), pos = joint_q(m, q, "pos");
    TL_CHECK(lead == 0 && neg == 0 && pos == 0, "Robotiq-like: leader and followers at 0 (lead %g, neg %g, pos %g)",
             lead, neg, pos);
    double lead2 = joint_q(m, q, "lead2"), shift = joint_q(m, q, "shift");
    TL_CHECK_NEAR(lead2, 0.525, 1e-12, "leader placed for its follower's range with margins");
    TL_CHECK_NEAR(shift, 0.525, 1e-12, "follower 0.5 + 0.05 * 0.5");
    double lead3 = joint_q(m, q, "lead3"), apart = joint_q(m, q, "apart");
    TL_CHECK_NEAR(lead3, 0.05, 1e-12, "unsolvable: the leader keeps its own clamp");
    TL_CHECK_NEAR(apart, 0.05, 1e-12, "unsolvable: the follower follows it");
  }
  tl_model_free(m);
}

static const char k_locked[] =
    "<robot name='finger'>\n"
    "  <link name='palm'/>\n"
    "  <link name='distal'><inertial><origin xyz='0.03 0 0'/><mass value='0.01'/>\n"
    "    <inertia ixx='1e-6' iyy='1e-6' izz='1e-6' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
    "  <link name='tip'><inertial><origin xyz='0.01 0 0'/><mass value='0.001'/>\n"
    "    <inertia ixx='1e-8' iyy='1e-8' izz='1e-8' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
    "  <joint name='distal_joint' type='revolute'><parent link='palm'/><child link='distal'/><axis xyz='0 1 0'/>\n"
    "    <limit lower='0.2' upper='1.7' effort='2' velocity='2'/></joint>\n"
    "  <joint name='tip_joint' type='revolute'><parent link='distal'/><child link='tip'/><axis xyz='0 1 0'/>\n"
    "    <origin xyz='0.035 0 0'/><limit lower='1' upper='1' effort='1' velocity='1'/></joint>\n"
    "</robot>\n";

static void locked_default(void) {
  tl_load_options o = tl_load_options_default();
  o.base = TL_BASE_FIXED;
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *sys = NULL;
  tl_error err;
  memset(&err, 0, sizeof(err));
  tl_status st = tl_model_load_urdf_any(k_locked, &o, &m, &err);
  TL_CHECK(st == TL_OK, "finger loads: %s", err.message);
  if (st != TL_OK) return;
  double q[2], u[2];
  TL_CHECK(tl_model_nq(m) == 2 && tl_model_default_q(m, q, 2, &err) == TL_OK, "default q: %s", err.message);
  TL_CHECK(joint_q(m, q, "tip_joint") == 1.0, "the locked tip starts at 1 rad, not %g", joint_q(m, q, "tip_joint"));
  TL_CHECK_NEAR(joint_q(m, q, "distal_joint"), 0.2 + 0.05 * 1.5, 1e-15, "the distal joint: 0 clamped with margin");
  TL_CHECK(tl_world_create(&w, &err) == TL_OK && tl_world_add_system(w, m, &sys, &err) == TL_OK, "world: %s",
           err.message);
  double worst = 0;
  for (int i = 0; sys && i < 500; i++) {
    TL_CHECK(tl_world_step(w, &err) == TL_OK, "step %d: %s", i, err.message);
    tl_system_get_state(sys, q, 2, u, 2, &err);
    worst = fmax(worst, fabs(joint_q(m, q, "tip_joint") - 1.0));
  }
  TL_CHECK(worst < 1e-6, "the locked tip stays at 1 rad under gravity: max |q - 1| = %g", worst);
  tl_world_free(w);
  tl_model_free(m);
}

static const char k_massless_root[] =
    "<robot name='hinge'>\n"
    "  <!-- PyBullet's static base: mass 0 -->\n"
    "  <link name='base'><inertial><mass value='0'/><inertia ixx='0' iyy='0' izz='0' ixy='0' ixz='0' iyz='0'/></inertial>\n"
    "    <collision><origin xyz='0 0 0.35'/><geometry><box size='0.08 0.16 0.7'/></geometry></collision></link>\n"
    "  <link name='arm'><inertial><origin xyz='0 0 -0.36'/><mass value='1'/>\n"
    "    <inertia ixx='0.05' iyy='0.05' izz='0.004' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
    "  <joint name='ball' type='spherical'><parent link='base'/><child link='arm'/></joint>\n"
    "</robot>\n";

static void singular_root(const char *cli) {
  char dir[] = "/tmp/talus_trial21_XXXXXX";
  if (!mkdtemp(dir)) {
    TL_CHECK(0, "mkdtemp failed");
    return;
  }
  char path[128];
  snprintf(path, sizeof(path), "%s/hinge.urdf", dir);
  FILE *f = fopen(path, "w");
  if (f) fputs(k_massless_root, f), fclose(f);
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *sys = NULL;
  tl_error err;
  memset(&err, 0, sizeof(err));
  TL_CHECK(tl_model_load_urdf(path, NULL, &m, &err) == TL_OK, "hinge.urdf loads: %s", err.message);
  TL_CHECK(tl_world_create(&w, &err) == TL_OK, "world: %s", err.message);
  if (m && w) {
    memset(&err, 0, sizeof(err));
    tl_status st = tl_world_add_system(w, m, &sys, &err);
    TL_CHECK(st == TL_ERR_INVALID && err.line == 3 && strcmp(err.element, "link") == 0,
             "refused naming <link> at line 3 (status %s, line %d, element '%s': %s)", tl_status_name(st), err.line,
             err.element, err.message);
    TL_CHECK(strstr(err.message, "hinge.urdf:3: <link>:") && strstr(err.message, "singular"),
             "message '%s' lacks 'hinge.urdf:3: <link>:'", err.message);
  }
  tl_world_free(w);
  tl_model_free(m);
  if (cli) {
    char cmd[512], out[4096] = "";
    snprintf(cmd, sizeof(cmd), "'%s' simulate '%s' --duration 0.01 2>&1", cli, path);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, sizeof(out) - 1, p) : 0;
    out[n] = '\0';
    int rc = p ? pclose(p) : -1;
    const char *first = strstr(out, "hinge.urdf");
    TL_CHECK(rc != 0 && first && strstr(out, "hinge.urdf:3: <link>:"), "simulate fails naming hinge.urdf:3: %s", out);
    TL_CHECK(first && !strstr(first + 1, "hinge.urdf"), "simulate names the file once: %s", out);
  }
  remove(path);
  rmdir(dir);
}

/* max_roll_pitch_rad of `talus simulate URDF --controller none --base-rpy RPY --duration 1 --json`. */
static double run_tilt(const char *cli, const char *urdf, const char *rpy) {
  char cmd[512], out[16384] = "";
  snprintf(cmd, sizeof(cmd), "'%s' simulate '%s' --controller none --base-rpy %s --duration 1 --json 2>/dev/null",
           cli, urdf, rpy);
  FILE *p = popen(cmd, "r");
  size_t n = p ? fread(out, 1, sizeof(out) - 1, p) : 0;
  out[n] = '\0';
  int rc = p ? pclose(p) : -1;
  const char *k = strstr(out, "\"max_roll_pitch_rad\"");
  k = k ? strchr(k, ':') : NULL;
  TL_CHECK(rc == 0 && k, "simulate --base-rpy %s: exit %d, no max_roll_pitch_rad", rpy, rc);
  return k ? strtod(k + 1, NULL) : NAN;
}

static void tilt(const char *cli) {
  if (!cli) {
    TL_CHECK(0, "tilt needs the talus program");
    return;
  }
  char dir[] = "/tmp/talus_trial21_XXXXXX";
  if (!mkdtemp(dir)) {
    TL_CHECK(0, "mkdtemp failed");
    return;
  }
  char path[128];
  snprintf(path, sizeof(path), "%s/slab.urdf", dir);
  FILE *f = fopen(path, "w");
  if (f) {
    fputs("<robot name='slab'><link name='slab'>\n"
          "  <inertial><mass value='2'/><inertia ixx='0.053' iyy='0.027' izz='0.027' ixy='0' ixz='0' iyz='0'/></inertial>\n"
          "  <collision><geometry><box size='0.04 0.4 0.4'/></geometry></collision>\n"
          "</link></robot>\n", f);
    fclose(f);
  }
  const double half_pi = 1.5707963267948966, pi = 3.141592653589793;
  /* dropped at pitch 1.5 / 1.65 / -1.65 rad, each settles flat on a face: pitch +-pi/2 */
  TL_CHECK_NEAR(run_tilt(cli, path, "0,1.5,0"), half_pi, 0.08, "slab from pitch 1.5 lying flat");
  TL_CHECK_NEAR(run_tilt(cli, path, "0,1.65,0"), half_pi, 0.08, "slab from pitch 1.65 lying flat");
  TL_CHECK_NEAR(run_tilt(cli, path, "0,-1.65,0"), half_pi, 0.08, "slab from pitch -1.65 lying flat");
  /* rolled pi about its x axis (upside down, on its edge): pi either way */
  TL_CHECK_NEAR(run_tilt(cli, path, "3.14159,0,1.5707963"), pi, 1e-3, "slab upside down");
  remove(path);
  rmdir(dir);
}

/* Output (stdout and stderr) and exit status of a shell command. */
static int run_cmd(const char *cmd, char *out, size_t cap) {
  FILE *p = popen(cmd, "r");
  size_t n = p ? fread(out, 1, cap - 1, p) : 0;
  out[n] = '\0';
  return p ? pclose(p) : -1;
}

static void trot_feet(const char *cli, const char *src) {
  if (!cli || !src) {
    TL_CHECK(0, "trot_feet needs the talus program and the source folder");
    return;
  }
  char in[512];
  snprintf(in, sizeof(in), "%s/robots/talus_quadruped/talus_quadruped.urdf", src);
  FILE *f = fopen(in, "rb");
  static char text[1 << 17];
  size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
  if (f) fclose(f);
  text[n] = '\0';
  char *end = strstr(text, "</robot>");
  if (!TL_CHECK(end != NULL, "%s: no </robot>", in)) return;
  char dir[] = "/tmp/talus_trial21_XXXXXX";
  if (!mkdtemp(dir)) {
    TL_CHECK(0, "mkdtemp failed");
    return;
  }
  char path[128];
  snprintf(path, sizeof(path), "%s/tailed.urdf", dir);
  f = fopen(path, "w");
  if (f) {
    fwrite(text, 1, (size_t)(end - text), f);
    fputs("  <link name='tail'><inertial><origin xyz='-0.05 0 0'/><mass value='0.2'/>\n"
          "    <inertia ixx='1e-4' iyy='1e-4' izz='1e-4' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
          "  <joint name='tail_joint' type='revolute'><parent link='base'/><child link='tail'/>\n"
          "    <origin xyz='-0.3 0 0'/><axis xyz='0 1 0'/><limit lower='-0.5' upper='0.5' effort='5' velocity='5'/></joint>\n"
          "</robot>\n", f);
    fclose(f);
  }
  char cmd[768];
  static char out[1 << 16];
  snprintf(cmd, sizeof(cmd), "'%s' simulate '%s' --controller trot --duration 0.1 2>&1", cli, path);
  int rc = run_cmd(cmd, out, sizeof(out));
  TL_CHECK(rc != 0 && strstr(out, "more than four leaf bodies") && strstr(out, "trot:feet=LF/RF/LH/RH"),
           "automatic feet refused, saying how to name them: %s", out);
  snprintf(cmd, sizeof(cmd), "'%s' simulate '%s' --controller trot:feet=LF_FOOT/RF_FOOT/LH_FOOT/RH_FOOT,speed=0.5 "
           "--duration 3 --json 2>/dev/null", cli, path);
  rc = run_cmd(cmd, out, sizeof(out));
  const char *v = strstr(out, "\"base_velocity_mean\"");
  v = v ? strchr(v, '[') : NULL;
  double vx = v ? strtod(v + 1, NULL) : NAN;
  TL_CHECK(rc == 0 && vx > 0.3, "named feet: exit %d, mean forward speed %g m/s (expected > 0.3 at speed 0.5)", rc, vx);
  snprintf(cmd, sizeof(cmd), "'%s' simulate '%s' --controller trot:feet=LF_FOOT/RF_FOOT --duration 0.1 2>&1", cli,
           path);
  rc = run_cmd(cmd, out, sizeof(out));
  TL_CHECK(rc != 0 && strstr(out, "expected four frame or link names"), "two feet refused: %s", out);
  /* four real-length link names (Minitaur's, 111 characters) are read, not refused as too long */
  snprintf(cmd, sizeof(cmd), "'%s' simulate '%s' --controller trot:feet=lower_leg_front_leftL_link/"
           "lower_leg_front_rightR_link/lower_leg_back_leftL_link/lower_leg_back_rightR_link --duration 0.1 2>&1",
           cli, path);
  rc = run_cmd(cmd, out, sizeof(out));
  TL_CHECK(rc != 0 && !strstr(out, "too long") && strstr(out, "lower_leg_front_leftL_link") && strstr(out, "not found"),
           "a 111-character feet list is read (its unknown first name reported): %s", out);
  remove(path);
  rmdir(dir);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "geometry_extra") == 0) geometry_extra();
  else if (strcmp(mode, "visual_materials") == 0) visual_materials();
  else if (strcmp(mode, "xml_version") == 0) xml_version();
  else if (strcmp(mode, "repeated_copy") == 0) repeated_copy();
  else if (strcmp(mode, "zero_visual") == 0) zero_visual();
  else if (strcmp(mode, "negative_limit") == 0) negative_limit();
  else if (strcmp(mode, "density") == 0) density();
  else if (strcmp(mode, "mimic_default") == 0) mimic_default();
  else if (strcmp(mode, "locked_default") == 0) locked_default();
  else if (strcmp(mode, "singular_root") == 0) singular_root(argc > 2 ? argv[2] : NULL);
  else if (strcmp(mode, "tilt") == 0) tilt(argc > 2 ? argv[2] : NULL);
  else if (strcmp(mode, "trot_feet") == 0) trot_feet(argc > 2 ? argv[2] : NULL, argc > 3 ? argv[3] : NULL);
  else {
    fprintf(stderr, "usage: test_trial21 geometry_extra|visual_materials|xml_version|repeated_copy|zero_visual|negative_limit|density|mimic_default|locked_default\n");
    return 2;
  }
  return tl_test_finish();
}
