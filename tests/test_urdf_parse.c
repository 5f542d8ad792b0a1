/* Guards: urdf/urdf_parse.c, src/base/xml.c (the parser and its errors). */
/* Talus tests: the URDF parser (urdf/urdf_parse.c, contract in urdf/urdf_doc.h).
 *
 * 1. Malformed files: every line "FILE|LINE|TEXT" of BAD_DIR/expected.txt
 *    names a file in BAD_DIR that must fail to load (tl_model_load_urdf: not
 *    with TL_ERR_IO unless about a mesh file, LINE > 0), with err.line ==
 *    LINE, a message containing TEXT and the file name; when the parser
 *    alone fails, the document is left zeroed. Every *.urdf in BAD_DIR must
 *    be listed.
 * 2. Inline text (tl_urdf_parse_string): every element and attribute the
 *    parser reads, defaults, line numbers through a BOM, CRLF, a comment
 *    before the XML declaration and trailing NULs; status codes; the warning
 *    cap; decimal points under a comma locale (when one is installed).
 * 3. The shared robot corpus: every URDF under ROBOTS_DIR must parse; the
 *    ones in `robots[]` below are checked against the link, joint, geometry
 *    and mass figures of ROBOTS_DIR/README.md and each PROVENANCE.md, plus
 *    per-robot details (RaiSim capsules, ANYmal's triangle-violating
 *    inertias, continuous and unlimited joints, mirrored meshes).
 *
 * Usage: test_urdf_parse BAD_DIR [ROBOTS_DIR]
 *   With TALUS_SHARED set, $TALUS_SHARED/robots replaces ROBOTS_DIR. A missing
 *   robots folder prints "SKIPPED: ..." and counts as neither pass nor fail.
 * Exit: 0 when no check failed, 1 otherwise. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_util.h"
#include "talus/urdf.h"
#include "urdf/urdf_doc.h"

#define MAX_LISTED 256

/* ------------------------------------------------------------------------ */
/* helpers                                                                   */

static int doc_is_zero(const tl_urdf_doc *doc) {
  static const tl_urdf_doc zero;
  return memcmp(doc, &zero, sizeof(zero)) == 0;
}

static const tl_urdf_link *find_link(const tl_urdf_doc *doc, const char *name) {
  for (int i = 0; i < doc->nlink; i++)
    if (strcmp(doc->links[i].name, name) == 0) return &doc->links[i];
  return NULL;
}

static const tl_urdf_joint *find_joint(const tl_urdf_doc *doc, const char *name) {
  for (int i = 0; i < doc->njoint; i++)
    if (strcmp(doc->joints[i].name, name) == 0) return &doc->joints[i];
  return NULL;
}

/* dst = a "/" b (just b when a is empty); 0 when it does not fit in cap bytes. */
static int join_path(char *dst, size_t cap, const char *a, const char *b) {
  size_t na = strlen(a), nb = strlen(b), ns = na ? 1 : 0;
  if (na + ns + nb + 1 > cap) return 0;
  memcpy(dst, a, na);
  if (ns) dst[na] = '/';
  memcpy(dst + na + ns, b, nb + 1);
  return 1;
}

static int has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Parse text (len bytes) and expect failure with `status` and `text` in the message. */
static void expect_string_error(const char *what, const char *urdf, tl_status status,
                                const char *text) {
  tl_urdf_doc doc;
  tl_error err;
  memset(&err, 0, sizeof(err));
  tl_status st = tl_urdf_parse_string(urdf, strlen(urdf), "inline.urdf", &doc, &err);
  TL_CHECK(st == status, "%s: status %d (%s), expected %d (%s): %s", what, st, tl_status_name(st),
           status, tl_status_name(status), err.message);
  TL_CHECK(strstr(err.message, text) != NULL, "%s: message \"%s\" lacks \"%s\"", what, err.message,
           text);
  TL_CHECK(doc_is_zero(&doc), "%s: document not zeroed after failure", what);
  if (st == TL_OK) tl_urdf_doc_free(&doc);
}

/* ------------------------------------------------------------------------ */
/* 1. malformed files                                                        */

static void check_bad_file(const char *dir, const char *file, int line, const char *text) {
  char path[1024];
  if (!join_path(path, sizeof(path), dir, file)) {
    TL_CHECK(0, "path too long: %s/%s", dir, file);
    return;
  }
  /* the whole loader (templates, parser, meshes, compiler) */
  tl_model *model = NULL;
  tl_error err;
  memset(&err, 0, sizeof(err));
  tl_status st = tl_model_load_urdf(path, NULL, &model, &err);
  TL_CHECK(st != TL_OK && (st != TL_ERR_IO || line > 0) && model == NULL,
           "%s: status %d (%s), expected a load failure: %s", file, st, tl_status_name(st), err.message);
  TL_CHECK(err.line == line, "%s: error line %d, expected %d: %s", file, err.line, line, err.message);
  TL_CHECK(strstr(err.message, text) != NULL, "%s: message \"%s\" lacks \"%s\"", file, err.message,
           text);
  TL_CHECK(strstr(err.message, file) != NULL, "%s: message \"%s\" does not name the file", file,
           err.message);
  tl_model_free(model);
  /* the parser alone: a failure leaves the document zeroed */
  tl_urdf_doc doc;
  if (tl_urdf_parse_file(path, &doc, &err) == TL_OK)
    tl_urdf_doc_free(&doc);
  else
    TL_CHECK(doc_is_zero(&doc), "%s: document not zeroed after failure", file);
}

/* Every *.urdf in dir must be among the n listed names. */
static void check_all_listed(const char *dir, char listed[][128], int n) {
  DIR *d = opendir(dir);
  if (!TL_CHECK(d != NULL, "cannot list %s", dir)) return;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (!has_suffix(e->d_name, ".urdf")) continue;
    int found = 0;
    for (int i = 0; i < n && !found; i++) found = strcmp(listed[i], e->d_name) == 0;
    TL_CHECK(found, "%s/%s is not listed in expected.txt", dir, e->d_name);
  }
  closedir(d);
}

static void test_bad_files(const char *dir) {
  static char listed[MAX_LISTED][128];
  char path[1024], line[1024];
  if (!join_path(path, sizeof(path), dir, "expected.txt")) {
    TL_CHECK(0, "path too long: %s", dir);
    return;
  }
  FILE *f = fopen(path, "r");
  if (!TL_CHECK(f != NULL, "cannot open %s", path)) return;
  int n = 0, lineno = 0;
  while (fgets(line, sizeof(line), f)) {
    lineno++;
    line[strcspn(line, "\r\n")] = '\0';
    if (line[0] == '\0' || line[0] == '#') continue;
    char *bar1 = strchr(line, '|'), *bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
    if (!TL_CHECK(bar2 != NULL, "expected.txt:%d: expected FILE|LINE|TEXT", lineno)) continue;
    *bar1 = *bar2 = '\0';
    if (n < MAX_LISTED && strlen(line) < sizeof(listed[0])) memcpy(listed[n++], line, strlen(line) + 1);
    check_bad_file(dir, line, atoi(bar1 + 1), bar2 + 1);
  }
  fclose(f);
  TL_CHECK(n >= 60, "expected.txt lists %d files, expected at least 60", n);
  printf("malformed: %d files, each with its expected error and line\n", n);
  check_all_listed(dir, listed, n);
}

/* ------------------------------------------------------------------------ */
/* 2. inline text                                                            */

/* Lines are numbered in the comments; the buffer ends in NUL bytes. */
static const char k_small[] =
    "\xEF\xBB\xBF<!-- written by hand -->\r\n"                                      /* 1 */
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n"                                /* 2 */
    "<robot name=\"small\">\r\n"                                                    /* 3 */
    "  <link name=\"arm\">\r\n"                                                     /* 4 */
    "    <collision name=\"cap\"><origin xyz=\"0 0 0.1\" rpy=\"0 0 1.5\"/>"
    "<geometry><capsule radius=\"0.05\" height=\"0.3\"/></geometry></collision>\r\n" /* 5 */
    "    <collision><geometry><mesh filename=\"package://x/m.stl\"/></geometry></collision>\r\n"
    "    <visual><geometry><sphere radius=\"0.5\"/></geometry></visual>\r\n"        /* 7 */
    "  </link>\r\n"                                                                 /* 8 */
    "  <link name=\"base\">\r\n"                                                    /* 9 */
    "    <inertial><origin xyz=\" 0 0 +5e-2 \"/><mass value=\"2.5\"/>"
    "<inertia ixx=\"0.1\" ixy=\"0\" ixz=\"0\" iyy=\"0.2\" iyz=\"0\" izz=\"0.25\"/></inertial>\r\n"
    "    <contact><lateral_friction value=\"1\"/></contact>\r\n"                    /* 11 */
    "  </link>\r\n"                                                                 /* 12 */
    "  <link name=\"hand\"/>\r\n"                                                   /* 13 */
    "  <link name=\"ball\"/>\r\n"                                                   /* 14 */
    "  <link name=\"slider\"/>\r\n"                                                 /* 15 */
    "  <joint name=\"shoulder\" type=\"revolute\">\r\n"                             /* 16 */
    "    <parent link=\"base\"/><child link=\"arm\"/><origin xyz=\"0 0 1\"/>\r\n"
    "    <axis xyz=\"0 3 4\"/><limit lower=\"-1\" upper=\"2\" effort=\"10\" velocity=\"3\"/>\r\n"
    "    <dynamics damping=\"0.5\" friction=\"0.1\" rotor_inertia=\"0.01\" spring_mount=\"0.2\""
    " stiffness=\"30\"/>\r\n"
    "  </joint>\r\n"                                                                /* 20 */
    "  <joint name=\"wrist\" type=\"universal\">\r\n"                               /* 21 */
    "    <parent link=\"arm\"/><child link=\"hand\"/><axis xyz=\"0 0 2\"/><axis2 xyz=\"1 0 0\"/>\r\n"
    "  </joint>\r\n"
    "  <joint name=\"neck\" type=\"ball\">\r\n"                                     /* 24 */
    "    <parent link=\"base\"/><child link=\"ball\"/><axis xyz=\"0 0 0\"/>\r\n"
    "    <mimic joint=\"shoulder\"/><calibration rising=\"0\"/><safety_controller k_velocity=\"1\"/>\r\n"
    "  </joint>\r\n"
    "  <joint name=\"rail\" type=\"prismatic\">\r\n"                                /* 28 */
    "    <parent link=\"base\"/><child link=\"slider\"/><limit upper=\"0.5\"/>\r\n"
    "  </joint>\r\n"
    "  <transmission name=\"t\"><type>x</type></transmission>\r\n"
    "  <gazebo reference=\"arm\"><mu1>0.5</mu1></gazebo>\r\n"
    "  <material name=\"red\"><color rgba=\"1 0 0 1\"/></material>\r\n"
    "  <xacro:property name=\"unused\" value=\"1\"/>\r\n"
    "  <sensor name=\"imu\"/>\r\n"
    "</robot>\r\n\0\0";

static void check_small_links(const tl_urdf_doc *doc) {
  TL_CHECK(strcmp(doc->robot_name, "small") == 0, "robot name \"%s\"", doc->robot_name);
  TL_CHECK(strcmp(doc->path, "small.urdf") == 0, "path \"%s\"", doc->path);
  if (!TL_CHECK(doc->nlink == 5 && doc->njoint == 4, "%d links, %d joints", doc->nlink, doc->njoint))
    return;
  TL_CHECK(strcmp(doc->links[0].name, "arm") == 0 && strcmp(doc->links[4].name, "slider") == 0,
           "links not in file order");
  TL_CHECK(doc->root_link == 1, "root link %d, expected 1 (base)", doc->root_link);
  const tl_urdf_link *arm = &doc->links[0], *base = &doc->links[1];
  TL_CHECK(arm->line == 4 && base->line == 9, "link lines %d, %d (BOM/CRLF/comment)", arm->line,
           base->line);
  TL_CHECK(!arm->has_inertial && arm->mass == 0, "arm has no <inertial>");
  TL_CHECK(base->has_inertial && base->mass == 2.5 && base->inertia[3] == 0.2 &&
               base->inertia[5] == 0.25 && base->inertial_origin.xyz[2] == 0.05,
           "base inertial");
  TL_CHECK(base->triangle_violation == 0 && doc->nwarning == 0, "no warnings expected, got %d",
           doc->nwarning);
  TL_CHECK(arm->nvisual == 1 && arm->visuals[0].geom.type == TL_GEOM_SPHERE &&
               arm->visuals[0].geom.size[0] == 0.5 && arm->visuals[0].geom.line == 7,
           "arm visual");
  TL_CHECK(base->contact_line == 11 && base->contact_friction == 1 && isnan(base->contact_restitution),
           "base <contact>");
  TL_CHECK(doc->nmaterial == 1 && strcmp(doc->materials[0].name, "red") == 0 &&
               doc->materials[0].has_color && doc->materials[0].rgba[0] == 1,
           "robot-level material");
  TL_CHECK(doc->nskipped == 4, "skipped: transmission, gazebo, xacro:property, sensor (%d)", doc->nskipped);
  if (!TL_CHECK(arm->ngeom == 2 && base->ngeom == 0, "arm has %d geoms", arm->ngeom)) return;
  const tl_urdf_geom *cap = &arm->geoms[0], *mesh = &arm->geoms[1];
  TL_CHECK(cap->type == TL_GEOM_CAPSULE && cap->size[0] == 0.05 && cap->size[1] == 0.3,
           "capsule with 'height': type %d size %g %g", cap->type, cap->size[0], cap->size[1]);
  TL_CHECK(strcmp(cap->name, "cap") == 0 && cap->line == 5 && cap->origin.xyz[2] == 0.1 &&
               cap->origin.rpy[2] == 1.5,
           "capsule name/line/origin");
  TL_CHECK(mesh->type == TL_GEOM_MESH && strcmp(mesh->mesh_uri, "package://x/m.stl") == 0 &&
               mesh->size[0] == 1 && mesh->size[1] == 1 && mesh->size[2] == 1 && mesh->name[0] == 0,
           "mesh uri \"%s\", default scale", mesh->mesh_uri);
}

static void check_small_joints(const tl_urdf_doc *doc) {
  if (doc->njoint != 4) return;
  const tl_urdf_joint *sh = &doc->joints[0], *wr = &doc->joints[1], *nk = &doc->joints[2],
                      *rl = &doc->joints[3];
  TL_CHECK(strcmp(sh->name, "shoulder") == 0 && sh->line == 16 && sh->parent_link == 1 &&
               sh->child_link == 0,
           "shoulder: line %d parent %d child %d", sh->line, sh->parent_link, sh->child_link);
  TL_CHECK(sh->type == TL_JOINT_REVOLUTE && !sh->continuous && sh->origin.xyz[2] == 1,
           "shoulder type / origin");
  TL_CHECK_NEAR(sh->axis[0], 0, 1e-15, "shoulder axis x");
  TL_CHECK_NEAR(sh->axis[1], 0.6, 1e-15, "shoulder axis y (normalised)");
  TL_CHECK_NEAR(sh->axis[2], 0.8, 1e-15, "shoulder axis z (normalised)");
  TL_CHECK(sh->has_limit && sh->lower == -1 && sh->upper == 2 && sh->effort == 10 && sh->velocity == 3,
           "shoulder limits");
  TL_CHECK(sh->damping == 0.5 && sh->friction == 0.1 && sh->rotor_inertia == 0.01 &&
               sh->spring_mount[0] == 0.2 && sh->stiffness == 30,
           "shoulder dynamics");
  TL_CHECK(wr->type == TL_JOINT_UNIVERSAL && wr->axis[2] == 1 && wr->axis2[0] == 1 &&
               !wr->has_limit && wr->lower == -INFINITY && wr->effort == INFINITY,
           "universal joint axes / defaults");
  TL_CHECK(nk->type == TL_JOINT_SPHERICAL && nk->axis[0] == 1 && nk->damping == 0,
           "ball joint: zero axis ignored, default (1 0 0) kept");
  TL_CHECK(nk->mimic_line == 26 && nk->mimic_joint == 0 && nk->mimic_mult == 1 && nk->mimic_offset == 0 &&
               nk->calibration[0] == 0 && isnan(nk->calibration[1]) && nk->has_safety &&
               nk->safety[3] == 1 && nk->safety[0] == 0,
           "neck: mimic, calibration, safety controller");
  TL_CHECK(sh->mimic_joint == -1 && !sh->has_safety && isnan(sh->calibration[0]), "shoulder: none");
  TL_CHECK(rl->type == TL_JOINT_PRISMATIC && rl->has_limit && rl->lower == -INFINITY &&
               rl->upper == 0.5 && rl->effort == INFINITY && rl->velocity == INFINITY,
           "prismatic with only 'upper': lower %g upper %g", rl->lower, rl->upper);
  TL_CHECK(rl->axis[0] == 1 && rl->axis[1] == 0 && rl->axis[2] == 0, "default axis (1 0 0)");
}

static void test_inline_robot(void) {
  tl_urdf_doc doc;
  tl_error err;
  memset(&err, 0, sizeof(err));
  tl_status st = tl_urdf_parse_string(k_small, sizeof(k_small), "small.urdf", &doc, &err);
  if (!TL_CHECK(st == TL_OK, "inline robot: %s", err.message)) return;
  check_small_links(&doc);
  check_small_joints(&doc);
  tl_urdf_doc_free(&doc);
  TL_CHECK(doc_is_zero(&doc), "tl_urdf_doc_free leaves the document zeroed");
  tl_urdf_doc_free(&doc); /* safe on a zeroed document */
}

static void test_inline_variants(void) {
  static const char floating[] =
      "<robot><link name=\"world\"/><link name=\"b\"/>"
      "<joint name=\"free\" type=\"floating\"><parent link=\"world\"/><child link=\"b\"/></joint>"
      "<joint name=\"unused\" type=\"continuous\"/></robot>";
  expect_string_error("continuous joint without parent", floating, TL_ERR_INVALID,
                      "joint 'unused' has no <parent>");
  static const char ok[] =
      "  \n<?xml version=\"1.0\"?>\n<robot><link name=\"world\"/><link name=\"b\"/>"
      "<joint name=\"free\" type=\"floating\"><parent link=\"world\"/><child link=\"b\"/>"
      "</joint></robot>";
  tl_urdf_doc doc;
  tl_error err;
  tl_status st = tl_urdf_parse_string(ok, strlen(ok), NULL, &doc, &err);
  if (TL_CHECK(st == TL_OK, "floating joint after a late declaration: %s", err.message)) {
    TL_CHECK(doc.joints[0].type == TL_JOINT_FLOATING && doc.robot_name[0] == 0 &&
                 strcmp(doc.path, "<string>") == 0,
             "floating joint / unnamed robot / <string>");
    tl_urdf_doc_free(&doc);
  }
  static const char cont[] =
      "<robot><link name=\"a\"/><link name=\"b\"/><joint name=\"c\" type=\"continuous\">"
      "<parent link=\"a\"/><child link=\"b\"/><limit lower=\"1\" upper=\"0\" effort=\"5\"/>"
      "</joint></robot>";
  st = tl_urdf_parse_string(cont, strlen(cont), "cont.urdf", &doc, &err);
  if (TL_CHECK(st == TL_OK, "continuous joint with a limit: %s", err.message)) {
    const tl_urdf_joint *j = &doc.joints[0];
    TL_CHECK(j->continuous && j->type == TL_JOINT_REVOLUTE && j->has_limit &&
                 j->lower == -INFINITY && j->upper == INFINITY && j->effort == 5,
             "continuous: position unlimited, effort kept");
    tl_urdf_doc_free(&doc);
  }
}

static void test_inline_errors(void) {
  static const char *const robot_a = "<robot><link name=\"a\"><inertial><mass value=\"%s\"/>"
                                     "<inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/>"
                                     "</inertial></link></robot>";
  static const struct {
    const char *value, *text;
    tl_status status;
  } masses[] = {
      {"abc", "attribute 'value' of <mass> in link 'a' is \"abc\": expected a number", TL_ERR_PARSE},
      {"1,5", "expected a number", TL_ERR_PARSE},
      {"1e999", "expected a finite number", TL_ERR_PARSE},
      {"-nan", "expected a finite number", TL_ERR_PARSE},
      {"", "is \"\": expected a number", TL_ERR_PARSE},
      {"1 2", "expected a number", TL_ERR_PARSE},
      {"-0.5", "mass of link 'a' is -0.5", TL_ERR_INVALID},
  };
  char text[512];
  for (size_t i = 0; i < sizeof(masses) / sizeof(masses[0]); i++) {
    snprintf(text, sizeof(text), robot_a, masses[i].value);
    expect_string_error(masses[i].value, text, masses[i].status, masses[i].text);
  }
  expect_string_error("planar zero axis", "<robot><link name=\"a\"/><link name=\"b\"/><joint name=\"p\" "
                      "type=\"planar\"><parent link=\"a\"/><child link=\"b\"/><axis xyz=\"0 0 0\"/></joint></robot>",
                      TL_ERR_INVALID, "axis");
  expect_string_error("root", "<model/>", TL_ERR_PARSE, "expected <robot>");
  expect_string_error("xml", "<robot><link name=\"a\"></robot>", TL_ERR_PARSE, "malformed XML");
  expect_string_error("empty", "", TL_ERR_PARSE, "empty");
  expect_string_error("parallel axes", "<robot><link name=\"a\"/><link name=\"b\"/><joint name=\"u\" "
                      "type=\"universal\"><parent link=\"a\"/><child link=\"b\"/><axis xyz=\"0 0 1\"/>"
                      "<axis2 xyz=\"0 0 -3\"/></joint></robot>", TL_ERR_INVALID, "parallel");
  /* two different origins (an exact copy is read past: test_trial21 repeated_copy) */
  expect_string_error("two origins", "<robot><link name=\"a\"><collision><origin/><origin xyz=\"0 0 1\"/>"
                      "<geometry><sphere radius=\"1\"/></geometry></collision></link></robot>",
                      TL_ERR_INVALID, "second <origin>");

  tl_urdf_doc doc;
  tl_error err;
  memset(&err, 0, sizeof(err));
  const char *missing = "/nonexistent/talus/robot.urdf";
  tl_status st = tl_urdf_parse_file(missing, &doc, &err);
  TL_CHECK(st == TL_ERR_IO && strstr(err.message, missing) && doc_is_zero(&doc),
           "missing file: status %d, message \"%s\"", st, err.message);
  st = tl_urdf_parse_string("<robot/>", 8, NULL, &doc, &err);
  TL_CHECK(st == TL_ERR_INVALID && strstr(err.message, "<string>:1:"), "unnamed text: \"%s\"",
           err.message);
  st = tl_urdf_parse_string("\0\0\0", 3, "nul.urdf", &doc, &err);
  TL_CHECK(st == TL_ERR_PARSE && strstr(err.message, "empty"), "only NUL bytes: \"%s\"", err.message);
  st = tl_urdf_parse_string("<robot/>", 8, NULL, &doc, NULL);
  TL_CHECK(st == TL_ERR_INVALID, "err == NULL is allowed");
  st = tl_urdf_parse_string("<robot/>", 8, NULL, NULL, &err);
  TL_CHECK(st == TL_ERR_ARGUMENT, "doc == NULL: status %d", st);
}

/* Line numbers past 65535 (libxml2 stores them in an unsigned short). */
static void test_long_file(void) {
  enum { BLANK = 70000 };
  static const char tail[] = "<link name=\"a\"><inertial><mass value=\"-1\"/><inertia ixx=\"1\" "
                             "ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial></link></robot>";
  size_t len = 8 + BLANK + sizeof(tail);
  char *text = malloc(len);
  if (!TL_CHECK(text != NULL, "malloc")) return;
  memcpy(text, "<robot>\n", 8);
  memset(text + 8, '\n', BLANK);
  memcpy(text + 8 + BLANK, tail, sizeof(tail));
  tl_urdf_doc doc;
  tl_error err;
  tl_status st = tl_urdf_parse_string(text, len, "long.urdf", &doc, &err);
  free(text);
  TL_CHECK(st == TL_ERR_INVALID && err.line == BLANK + 2 && strstr(err.message, "long.urdf:70002: <mass>"),
           "error past line 65535: status %d line %d \"%s\"", st, err.line, err.message);
}

/* 20 links whose inertias all break A + B >= C: 20 warnings, 16 kept. */
static void test_warning_cap(void) {
  enum { N = 20 };
  size_t cap = 400 * N;
  char *text = malloc(cap);
  if (!TL_CHECK(text != NULL, "malloc")) return;
  size_t n = (size_t)snprintf(text, cap, "<robot name=\"chain\">\n");
  for (int i = 0; i < N; i++) {
    n += (size_t)snprintf(text + n, cap - n, "<link name=\"l%d\"><inertial><mass value=\"1\"/>"
                          "<inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"3\"/>"
                          "</inertial></link>\n", i);
    if (i > 0)
      n += (size_t)snprintf(text + n, cap - n, "<joint name=\"j%d\" type=\"fixed\"><parent link=\"l%d\"/>"
                            "<child link=\"l%d\"/></joint>\n", i, i - 1, i);
  }
  snprintf(text + n, cap - n, "</robot>\n");
  tl_urdf_doc doc;
  tl_error err;
  tl_status st = tl_urdf_parse_string(text, strlen(text), "chain.urdf", &doc, &err);
  free(text);
  if (!TL_CHECK(st == TL_OK, "triangle chain: %s", err.message)) return;
  TL_CHECK(doc.nwarning == N, "nwarning %d, expected %d", doc.nwarning, N);
  TL_CHECK(strstr(doc.warnings[15], "link 'l15'") && strstr(doc.warnings[15], "triangle"),
           "warning 15: \"%s\"", doc.warnings[15]);
  TL_CHECK(doc.links[19].triangle_violation == 1 && doc.links[19].line == 39,
           "last link flagged, line %d", doc.links[19].line);
  tl_urdf_doc_free(&doc);
}

/* strtod must read '.' as the decimal point whatever LC_NUMERIC says. */
static void test_locale(void) {
  static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
  const char *set = NULL;
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !set; i++)
    set = setlocale(LC_NUMERIC, names[i]);
  if (!set) {
    printf("note: no comma-decimal locale installed, locale check not run\n");
    return;
  }
  static const char text[] = "<robot><link name=\"a\"><inertial><mass value=\"0.5\"/><inertia "
                             "ixx=\"0.25\" ixy=\"0\" ixz=\"0\" iyy=\"0.25\" iyz=\"0\" izz=\"0.25\"/>"
                             "</inertial></link></robot>";
  tl_urdf_doc doc;
  tl_error err;
  tl_status st = tl_urdf_parse_string(text, strlen(text), "locale.urdf", &doc, &err);
  setlocale(LC_NUMERIC, "C");
  if (TL_CHECK(st == TL_OK, "under locale %s: %s", set, err.message)) {
    TL_CHECK(doc.links[0].mass == 0.5, "mass %g under locale %s", doc.links[0].mass, set);
    tl_urdf_doc_free(&doc);
  }
}

/* ------------------------------------------------------------------------ */
/* 3. shared robots                                                          */

/* Figures from robots/README.md and the PROVENANCE.md tables. */
typedef struct robot_expect {
  const char *file; /* relative to the robots folder */
  const char *name, *root;
  int nlink;
  int nrevolute, ncontinuous, nprismatic, nfixed, nspherical; /* joints */
  int nbox, ncylinder, nsphere, ncapsule, nmesh;              /* collision geoms */
  double mass;                                                /* sum, 4 decimals */
} robot_expect;

static const robot_expect robots[] = {
    {"anymal_c/urdf/anymal.urdf", "anymal", "base", 78, 12, 0, 0, 65, 0, 12, 29, 4, 0, 0, 52.1349},
    {"anymal_c/urdf/anymal_c_nolimit.urdf", "anymal", "base", 62, 12, 0, 0, 49, 0, 11, 28, 4, 1, 0, 41.7092},
    {"cartpole/cartpole.urdf", "physics", "slideBar", 3, 0, 1, 1, 0, 0, 2, 0, 0, 0, 0, 11.0},
    {"deepmimic_humanoid/humanoid.urdf", "dumpUrdf", "base", 16, 4, 0, 0, 3, 8, 2, 0, 5, 8, 0, 45.0001},
    {"double_pendulum/urdf/double_pendulum.urdf", "2dof_planar", "base_link", 3, 2, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0.7010},
    {"double_pendulum/urdf/double_pendulum_continuous.urdf", "2dof_planar", "base_link", 3, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 0.7010},
    {"double_pendulum/urdf/double_pendulum_simple.urdf", "2dof_planar", "base_link", 4, 2, 0, 0, 1, 0, 3, 0, 0, 0, 0, 0.6000},
    {"husky/husky.urdf", "husky_robot", "base_footprint", 11, 0, 4, 0, 6, 0, 1, 4, 0, 0, 0, 44.0030},
    {"hyq/robots/hyq_no_sensors.urdf", "hyq", "base_link", 19, 12, 0, 0, 6, 0, 0, 4, 4, 0, 9, 86.7740},
    {"kuka_iiwa/model.urdf", "lbr_iiwa", "lbr_iiwa_link_0", 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 8, 17.5000},
    {"panda/urdf/panda.urdf", "panda", "panda_link0", 13, 7, 0, 2, 3, 0, 8, 0, 0, 0, 9, 17.4519},
    {"solo12/robots/solo12.urdf", "solo", "base_link", 17, 12, 0, 0, 4, 0, 0, 0, 0, 0, 17, 2.5000},
    {"talos/robots/talos_full_v2.urdf", "talos", "base_link", 60, 44, 0, 0, 15, 0, 1, 4, 0, 0, 47, 93.3357},
    {"talos/robots/talos_reduced.urdf", "talos", "base_link", 60, 32, 0, 0, 27, 0, 1, 4, 0, 0, 47, 90.2722},
    {"ur5/urdf/ur5_robot.urdf", "ur5", "world", 11, 6, 0, 0, 4, 0, 1, 0, 0, 0, 7, 20.9939},
};
#define NROBOT ((int)(sizeof(robots) / sizeof(robots[0])))

/* Contract of urdf_doc.h that holds for every successful parse. */
static int doc_invariants(const tl_urdf_doc *doc) {
  for (int i = 0; i < doc->njoint; i++) {
    const tl_urdf_joint *j = &doc->joints[i];
    double n = sqrt(j->axis[0] * j->axis[0] + j->axis[1] * j->axis[1] + j->axis[2] * j->axis[2]);
    if (fabs(n - 1) > 1e-12 || j->parent_link < 0 || j->parent_link >= doc->nlink ||
        j->child_link < 0 || j->child_link >= doc->nlink || j->parent_link == j->child_link ||
        j->child_link == doc->root_link || !(j->lower <= j->upper) || j->line <= 0)
      return 0;
  }
  for (int i = 0; i < doc->nlink; i++) {
    const tl_urdf_link *l = &doc->links[i];
    if (!(l->mass >= 0) || l->line <= 0 || l->name[0] == 0) return 0;
    for (int k = 0; k < l->ngeom; k++) {
      const tl_urdf_geom *g = &l->geoms[k];
      int n = g->type == TL_GEOM_SPHERE ? 1 : g->type == TL_GEOM_BOX || g->type == TL_GEOM_MESH ? 3 : 2;
      for (int c = 0; c < n; c++)
        if (g->type == TL_GEOM_MESH ? g->size[c] == 0 : !(g->size[c] > 0)) return 0;
    }
  }
  return doc->njoint == doc->nlink - 1;
}

static void check_counts(const robot_expect *r, const tl_urdf_doc *doc) {
  int jt[6] = {0}, ncont = 0, gt[6] = {0};
  double mass = 0;
  for (int i = 0; i < doc->njoint; i++) jt[doc->joints[i].type]++, ncont += doc->joints[i].continuous;
  for (int i = 0; i < doc->nlink; i++) {
    mass += doc->links[i].mass;
    for (int k = 0; k < doc->links[i].ngeom; k++) gt[doc->links[i].geoms[k].type]++;
  }
  TL_CHECK(doc->nlink == r->nlink, "%s: %d links, expected %d", r->file, doc->nlink, r->nlink);
  TL_CHECK(jt[TL_JOINT_REVOLUTE] - ncont == r->nrevolute && ncont == r->ncontinuous &&
               jt[TL_JOINT_PRISMATIC] == r->nprismatic && jt[TL_JOINT_FIXED] == r->nfixed &&
               jt[TL_JOINT_SPHERICAL] == r->nspherical && jt[TL_JOINT_FLOATING] == 0 &&
               jt[TL_JOINT_UNIVERSAL] == 0,
           "%s: joints rev %d cont %d pris %d fixed %d sph %d", r->file, jt[TL_JOINT_REVOLUTE] - ncont,
           ncont, jt[TL_JOINT_PRISMATIC], jt[TL_JOINT_FIXED], jt[TL_JOINT_SPHERICAL]);
  TL_CHECK(gt[TL_GEOM_BOX] == r->nbox && gt[TL_GEOM_CYLINDER] == r->ncylinder &&
               gt[TL_GEOM_SPHERE] == r->nsphere && gt[TL_GEOM_CAPSULE] == r->ncapsule &&
               gt[TL_GEOM_MESH] == r->nmesh,
           "%s: geoms box %d cyl %d sphere %d capsule %d mesh %d", r->file, gt[TL_GEOM_BOX],
           gt[TL_GEOM_CYLINDER], gt[TL_GEOM_SPHERE], gt[TL_GEOM_CAPSULE], gt[TL_GEOM_MESH]);
  TL_CHECK_NEAR(mass, r->mass, 5.1e-5, r->file);
  TL_CHECK(strcmp(doc->robot_name, r->name) == 0 &&
               strcmp(doc->links[doc->root_link].name, r->root) == 0,
           "%s: robot \"%s\", root \"%s\"", r->file, doc->robot_name, doc->links[doc->root_link].name);
}

static void check_anymal(const tl_urdf_doc *doc) {
  const tl_urdf_link *cam = find_link(doc, "depth_camera_front_camera"), *base = find_link(doc, "base");
  TL_CHECK(cam && cam->triangle_violation == 1, "anymal.urdf: front camera inertia flagged");
  TL_CHECK(base && base->triangle_violation == 0, "anymal.urdf: base inertia not flagged");
  TL_CHECK(doc->nwarning == 5, "anymal.urdf: %d warnings, expected 4 triangle + 1 singular (hatch)",
           doc->nwarning);
  const tl_urdf_joint *j = find_joint(doc, "LF_HAA");
  TL_CHECK(j && j->line == 624 && j->type == TL_JOINT_REVOLUTE && j->has_limit && j->lower == -0.72 &&
               j->upper == 0.49 && j->effort == 80 && j->velocity == 7.5 && j->axis[0] == 1 &&
               strcmp(doc->links[j->parent_link].name, "LF_HAA") == 0 &&
               strcmp(doc->links[j->child_link].name, "LF_HIP") == 0,
           "anymal.urdf: joint LF_HAA");
}

static void check_anymal_nolimit(const tl_urdf_doc *doc) {
  const tl_urdf_link *l = find_link(doc, "velodyne_cage");
  TL_CHECK(l && l->ngeom == 1 && l->geoms[0].type == TL_GEOM_CAPSULE && l->geoms[0].size[0] == 0.07 &&
               l->geoms[0].size[1] == 0.12 && l->geoms[0].origin.xyz[2] == 0.06,
           "anymal_c_nolimit.urdf: capsule radius 0.07 length 0.12 on velodyne_cage");
  const tl_urdf_joint *j = find_joint(doc, "LF_HAA");
  TL_CHECK(j && !j->has_limit && j->lower == -INFINITY && j->upper == INFINITY &&
               j->effort == INFINITY && j->velocity == INFINITY,
           "anymal_c_nolimit.urdf: LF_HAA without <limit> is unlimited");
}

static void check_humanoid(const tl_urdf_doc *doc) {
  const tl_urdf_link *l = find_link(doc, "right_hip");
  TL_CHECK(l && l->line == 63, "humanoid.urdf: right_hip at line 63 (CRLF)");
  TL_CHECK(l && l->ngeom == 1 && l->geoms[0].type == TL_GEOM_CAPSULE && l->geoms[0].size[0] == 0.22 &&
               l->geoms[0].size[1] == 1.2 && l->geoms[0].origin.rpy[0] == -1.570796,
           "humanoid.urdf: right_hip capsule radius 0.22 length 1.2");
  const tl_urdf_joint *chest = find_joint(doc, "chest");
  TL_CHECK(chest && chest->type == TL_JOINT_SPHERICAL, "humanoid.urdf: chest is spherical");
}

static void check_cartpole(const tl_urdf_doc *doc) {
  const tl_urdf_joint *s = find_joint(doc, "slider_to_cart"), *c = find_joint(doc, "cart_to_pole");
  TL_CHECK(s && s->type == TL_JOINT_PRISMATIC && s->has_limit && s->lower == -15 && s->upper == 15 &&
               s->effort == 1000 && s->velocity == 5,
           "cartpole.urdf: slider limits");
  TL_CHECK(c && c->type == TL_JOINT_REVOLUTE && c->continuous && !c->has_limit && c->axis[1] == 1 &&
               c->lower == -INFINITY && c->upper == INFINITY,
           "cartpole.urdf: continuous pole joint about y");
}

static void check_details(const char *file, const tl_urdf_doc *doc) {
  if (has_suffix(file, "/anymal.urdf")) check_anymal(doc);
  if (has_suffix(file, "/anymal_c_nolimit.urdf")) check_anymal_nolimit(doc);
  if (has_suffix(file, "/humanoid.urdf")) check_humanoid(doc);
  if (has_suffix(file, "/cartpole.urdf")) check_cartpole(doc);
  if (has_suffix(file, "/double_pendulum_continuous.urdf")) {
    const tl_urdf_joint *j = find_joint(doc, "joint1");
    TL_CHECK(j && j->continuous && j->has_limit && j->lower == -INFINITY && j->upper == INFINITY &&
                 j->damping == 0.05,
             "double_pendulum_continuous.urdf: joint1 continuous, zero limits ignored");
    TL_CHECK(j && j->line == 87, "double_pendulum_continuous.urdf: joint1 reported at line %d, "
             "expected 87 where its three-line start tag begins", j ? j->line : -1);
  }
  if (has_suffix(file, "/talos_full_v2.urdf")) {
    int mirrored = 0;
    for (int i = 0; i < doc->nlink; i++)
      for (int k = 0; k < doc->links[i].ngeom; k++)
        mirrored += doc->links[i].geoms[k].type == TL_GEOM_MESH && doc->links[i].geoms[k].size[1] == -1;
    TL_CHECK(mirrored > 0, "talos_full_v2.urdf: mirrored collision meshes (scale 1 -1 1) load");
  }
}

static void check_robot(const char *dir, const char *rel, int *seen) {
  char path[2048];
  if (!join_path(path, sizeof(path), dir, rel)) {
    TL_CHECK(0, "path too long: %s/%s", dir, rel);
    return;
  }
  tl_urdf_doc doc;
  tl_error err;
  tl_status st = tl_urdf_parse_file(path, &doc, &err);
  if (!TL_CHECK(st == TL_OK, "%s: %s", rel, err.message)) return;
  TL_CHECK(doc_invariants(&doc), "%s: urdf_doc.h guarantees", rel);
  for (int i = 0; i < NROBOT; i++)
    if (strcmp(robots[i].file, rel) == 0) seen[i] = 1, check_counts(&robots[i], &doc);
  check_details(path, &doc);
  tl_urdf_doc_free(&doc);
}

/* Parse every *.urdf below dir/rel (recursively). */
static void walk_robots(const char *dir, const char *rel, int *seen, int *nfound) {
  char path[2048];
  if (!join_path(path, sizeof(path), dir, rel)) return;
  DIR *d = opendir(path);
  if (!d) return;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.') continue;
    char sub[2048], full[2048];
    struct stat s;
    if (!join_path(sub, sizeof(sub), rel, e->d_name) || !join_path(full, sizeof(full), dir, sub) ||
        stat(full, &s) != 0)
      continue;
    if (S_ISDIR(s.st_mode))
      walk_robots(dir, sub, seen, nfound);
    else if (has_suffix(e->d_name, ".urdf"))
      (*nfound)++, check_robot(dir, sub, seen);
  }
  closedir(d);
}

static void test_robots(const char *dir) {
  struct stat s;
  if (!dir || stat(dir, &s) != 0 || !S_ISDIR(s.st_mode)) {
    tl_test_skip("%s not found (shared robot corpus checks)", dir ? dir : "../shared/robots");
    return;
  }
  int seen[NROBOT] = {0}, nfound = 0;
  walk_robots(dir, "", seen, &nfound);
  for (int i = 0; i < NROBOT; i++)
    TL_CHECK(seen[i], "%s/%s: not found in the robot corpus", dir, robots[i].file);
  printf("robots: %d URDF files parsed from %s\n", nfound, dir);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s BAD_DIR [ROBOTS_DIR]\n", argv[0]);
    return 2;
  }
  char robots_dir[1024];
  const char *env = getenv("TALUS_SHARED");
  if (env && env[0])
    snprintf(robots_dir, sizeof(robots_dir), "%s/robots", env);
  else
    snprintf(robots_dir, sizeof(robots_dir), "%s", argc > 2 ? argv[2] : "../shared/robots");
  test_bad_files(argv[1]);
  test_inline_robot();
  test_inline_variants();
  test_inline_errors();
  test_warning_cap();
  test_long_file();
  test_locale();
  test_robots(robots_dir);
  return tl_test_finish();
}
