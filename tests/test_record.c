/* Guards: src/record/recorder.c, src/record/record_scene.c, src/record/record_write.c,
 * src/record/record_mesh.c (the recorder and the files it writes). */
/* The recorder (talus/record.h) through its API and the files it writes:
 *   - schedule: fps 50 at dt 1 ms gives a frame every 20 steps (51 frames in 1 s), every = 7
 *     one every 7th update, keep_frames 0 keeps one frame while counting all;
 *   - the written page: its embedded JSON parses, the frame arrays decode (base64 float32) to the
 *     engine's body poses (1e-6 m, quaternions of tl_system_body_pose's R) and times;
 *   - physics in the frames: a 2 kg box resting on the ground carries m g = 19.62 N of contact
 *     normal force (per-body series and the contacts' forces, 0.5%), its kinetic energy ~ 0 and
 *     potential energy m g z;
 *   - the CSV: header and one row per frame, same column count;
 *   - memory: no allocation per frame with reserve_frames, O(log n) allocations without;
 *   - no influence: a run recorded at every step ends bit-identical to an unrecorded one;
 *   - errors: bad options, a world changed after creation, unwritable paths (nothing left behind);
 *   - world read-back: tl_world_static_geom / tl_world_heightmap return what was added;
 *   - meshes: vertex clustering of a 20 000-triangle sphere keeps it a sphere within the cell size
 *     and within budget; ANYmal C's COLLADA meshes keep their Z-up axes (its base mesh is long
 *     along x like its collision box; skipped without ../shared). */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "record/record_internal.h"
#include "talus/talus.h"
#include "test_util.h"

#include "test_alloc.h"

static tl_error err;
static char tmpdir[256];

/* A world: ground, a 2 kg box 0.2 m resting on it, the talus quadruped (standing, PD). */
static tl_world *make_world(const char *robots, tl_system **box, tl_system **quad) {
  tl_world *w = NULL;
  tl_model *m = NULL, *b = NULL;
  char path[1024];
  snprintf(path, sizeof path, "%s/talus_quadruped/talus_quadruped.urdf", robots);
  double size[3] = {0.2, 0.2, 0.2};
  int ok = tl_world_create(&w, &err) == TL_OK && tl_world_add_ground(w, 0, 0.8, &err) == TL_OK &&
           tl_model_create_primitive(TL_GEOM_BOX, size, 2.0, "crate", &b, &err) == TL_OK &&
           tl_world_add_system(w, b, box, &err) == TL_OK && tl_model_load_urdf(path, NULL, &m, &err) == TL_OK &&
           tl_world_add_system(w, m, quad, &err) == TL_OK;
  if (ok) {
    double q[7] = {1.0, 0, 0.1, 1, 0, 0, 0}, u[6] = {0};
    ok = tl_system_set_state(*box, q, 7, u, 6, &err) == TL_OK;
    int nq = tl_system_nq(*quad), nv = tl_system_nv(*quad);
    double qq[64], uu[64] = {0}, kp[64], kd[64];
    ok = ok && tl_system_get_state(*quad, qq, nq, uu, nv, &err) == TL_OK;
    qq[2] = 0.56;
    for (int i = 0; i < nv; ++i) kp[i] = i < 6 ? 0 : 300, kd[i] = i < 6 ? 0 : 10;
    ok = ok && tl_system_set_state(*quad, qq, nq, uu, nv, &err) == TL_OK &&
         tl_system_set_pd_gains(*quad, kp, kd, nv, &err) == TL_OK &&
         tl_system_set_pd_targets(*quad, qq, nq, uu, nv, &err) == TL_OK;
  }
  TL_CHECK(ok, "world: %s", err.message);
  tl_model_free(m);
  tl_model_free(b);
  if (!ok) {
    tl_world_free(w);
    return NULL;
  }
  return w;
}

static int step(tl_world *w, tl_recorder *r, int n) {
  for (int i = 0; i < n; ++i)
    if (tl_world_step(w, &err) != TL_OK || tl_recorder_update(r, NULL, &err) != TL_OK) return 0;
  return 1;
}

/* ---------------------------------------------------------------- base64 and the page */

static int b64val(int c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Decode base64 text into a new buffer (*n bytes). */
static unsigned char *unbase64(const char *s, size_t *n) {
  size_t len = strlen(s);
  unsigned char *out = malloc(len / 4 * 3 + 3);
  size_t k = 0;
  for (size_t i = 0; i + 3 < len; i += 4) {
    int a = b64val(s[i]), b = b64val(s[i + 1]), c = b64val(s[i + 2]), d = b64val(s[i + 3]);
    out[k++] = (unsigned char)(a << 2 | b >> 4);
    if (s[i + 2] != '=') out[k++] = (unsigned char)((b & 15) << 4 | c >> 2);
    if (s[i + 3] != '=') out[k++] = (unsigned char)((c & 3) << 6 | d);
  }
  *n = k;
  return out;
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  size_t got = fread(s, 1, (size_t)n, f);
  s[got] = '\0';
  fclose(f);
  return s;
}

/* The JSON embedded in a written page. */
static cJSON *page_json(const char *path) {
  char *text = read_file(path);
  if (!text) return NULL;
  const char *open = "<script type=\"application/json\" id=\"talus-data\">";
  char *a = strstr(text, open), *b = a ? strstr(a, "</script>") : NULL;
  cJSON *root = NULL;
  if (a && b) {
    *b = '\0';
    root = cJSON_Parse(a + strlen(open));
  }
  TL_CHECK(strncmp(text, "<!DOCTYPE html>", 15) == 0, "the page starts with <!DOCTYPE html>");
  free(text);
  return root;
}

static float *blob(cJSON *root, const char *key, size_t *n) {
  const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(root, key));
  if (!s) return NULL;
  size_t bytes;
  float *f = (float *)unbase64(s, &bytes);
  *n = bytes / 4;
  return f;
}

/* Frame poses and contact forces in the written page against the engine's current state. */
static void check_page(const char *robots) {
  tl_system *box = NULL, *quad = NULL;
  tl_world *w = make_world(robots, &box, &quad);
  if (!w) return;
  tl_recorder_options o;
  o = tl_recorder_options_default();
  o.fps = 50;
  o.main_system = 0; /* the box */
  tl_recorder *r = NULL;
  TL_CHECK(tl_recorder_create(w, &o, &r, &err) == TL_OK, "create: %s", err.message);
  if (!r) {
    tl_world_free(w);
    return;
  }
  TL_CHECK(step(w, r, 1000), "stepping: %s", err.message);
  TL_CHECK(tl_recorder_nframe(r) == 51, "fps 50 at dt 1 ms for 1 s: 51 frames (got %lld)", tl_recorder_nframe(r));
  TL_CHECK_NEAR(tl_recorder_time(r), 1.0, 1e-9, "time of the last frame");
  if (!tl_recorder_have_viewer()) {
    TL_CHECK(tl_recorder_write_html(r, "x.html", &err) == TL_ERR_UNSUPPORTED, "no viewer: TL_ERR_UNSUPPORTED");
    printf("NOTE: this build has no viewer page (web/node_modules missing at CMake time)\n");
  } else {
    char path[512];
    snprintf(path, sizeof path, "%s/run.html", tmpdir);
    TL_CHECK(tl_recorder_write_html(r, path, &err) == TL_OK, "write_html: %s", err.message);
    cJSON *root = page_json(path);
    TL_CHECK(root != NULL, "the page's data parses as JSON");
    cJSON *layout = cJSON_GetObjectItem(root, "layout");
    int F = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(layout, "floats"));
    int poses = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(layout, "poses"));
    int fnb = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(layout, "body_fn"));
    int energy = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(layout, "energy"));
    size_t nf = 0, nc = 0, ncs = 0;
    float *frames = blob(root, "frames", &nf), *contacts = blob(root, "contacts", &nc);
    uint32_t *cstart = (uint32_t *)blob(root, "contact_start", &ncs);
    TL_CHECK(frames && nf == (size_t)51 * (size_t)F, "frames: 51 x %d floats (got %zu)", F, nf);
    TL_CHECK(cstart && ncs == 52, "contact_start: 52 offsets");
    if (frames && nf == (size_t)51 * (size_t)F && cstart && ncs == 52) {
      const float *last = frames + 50 * F;
      TL_CHECK_NEAR(last[0], 1.0, 1e-6, "time of frame 50");
      TL_CHECK_NEAR(frames[25 * F], 0.5, 1e-6, "time of frame 25");
      /* every body of both systems: position and rotation equal the engine's */
      double maxp = 0, maxr = 0;
      int k = 0;
      for (int s = 0; s < tl_world_nsystem(w); ++s) {
        tl_system *sys = tl_world_system(w, s);
        for (int b = 0; b < tl_model_nbody(tl_system_model(sys)); ++b, ++k) {
          double pos[3], R[9], Rq[9];
          tl_system_body_pose(sys, b, pos, R, NULL);
          const float *p = last + poses + 7 * k;
          double q[4] = {p[6], p[3], p[4], p[5]}; /* stored x y z w */
          double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
          for (int i = 0; i < 4; ++i) q[i] /= n;
          double w0 = q[0], x = q[1], y = q[2], z = q[3];
          Rq[0] = 1 - 2 * (y * y + z * z), Rq[1] = 2 * (x * y - w0 * z), Rq[2] = 2 * (x * z + w0 * y);
          Rq[3] = 2 * (x * y + w0 * z), Rq[4] = 1 - 2 * (x * x + z * z), Rq[5] = 2 * (y * z - w0 * x);
          Rq[6] = 2 * (x * z - w0 * y), Rq[7] = 2 * (y * z + w0 * x), Rq[8] = 1 - 2 * (x * x + y * y);
          for (int i = 0; i < 3; ++i) maxp = fmax(maxp, fabs(p[i] - pos[i]));
          for (int i = 0; i < 9; ++i) maxr = fmax(maxr, fabs(Rq[i] - R[i]));
        }
      }
      TL_CHECK(k == 14, "14 bodies (box + quadruped 13), got %d", k);
      TL_CHECK(maxp < 1e-6 && maxr < 1e-6, "recorded poses = engine poses (|dp| %.2g m, |dR| %.2g)", maxp, maxr);
      /* the resting box: normal force m g on body 0 of the main system (the box), energies */
      double mg = 2.0 * 9.81;
      TL_CHECK_NEAR(last[fnb], mg, 0.005 * mg, "box normal force series (N)");
      double fz = 0;
      for (uint32_t c = cstart[50]; c < cstart[51]; ++c) {
        const float *cc = contacts + 9 * c;
        if (fabs(cc[0] - 1.0) < 0.2 && fabs(cc[1]) < 0.2) fz += cc[8]; /* contacts under the box */
      }
      TL_CHECK_NEAR(fz, mg, 0.005 * mg, "sum of the box's contact forces, z (N)");
      TL_CHECK(last[energy] >= 0, "kinetic energy >= 0");
      double pe_box = 2.0 * 9.81 * 0.1;
      double pe_quad = tl_system_potential_energy(quad);
      TL_CHECK_NEAR(last[energy + 1], pe_box + pe_quad, 1e-3 * (pe_box + pe_quad), "potential energy (J)");
    }
    free(frames);
    free(contacts);
    free(cstart);
    cJSON *statics = cJSON_GetObjectItem(root, "statics");
    TL_CHECK(cJSON_GetArraySize(statics) == 1 &&
                 strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(statics, 0), "type")), "plane") == 0,
             "one static: the ground plane");
    cJSON_Delete(root);
    unlink(path);
    /* CSV: header + 51 rows, same number of columns */
    snprintf(path, sizeof path, "%s/run.csv", tmpdir);
    TL_CHECK(tl_recorder_write_csv(r, path, &err) == TL_OK, "write_csv: %s", err.message);
    char *csv = read_file(path);
    int lines = 0, bad = 0, cols0 = -1;
    for (char *line = csv ? strtok(csv, "\n") : NULL; line; line = strtok(NULL, "\n"), ++lines) {
      int cols = 1;
      for (char *c = line; *c; ++c) cols += *c == ',';
      if (cols0 < 0) cols0 = cols;
      bad += cols != cols0;
    }
    TL_CHECK(lines == 52 && bad == 0, "CSV: 52 lines of %d columns (%d lines, %d bad)", cols0, lines, bad);
    free(csv);
    unlink(path);
  }
  /* a world changed after creation */
  double size[3] = {0.1, 0.1, 0.1}, pos[3] = {3, 0, 0.05};
  tl_world_add_static_geom(w, TL_GEOM_BOX, size, pos, NULL, NULL, NULL, &err);
  TL_CHECK(tl_recorder_update(r, NULL, &err) == TL_ERR_INVALID && strstr(err.message, "changed"),
           "a changed world is refused: %s", err.message);
  tl_recorder_free(r);
  tl_world_free(w);
}

/* ---------------------------------------------------------------- schedule and memory */

static void check_schedule(const char *robots) {
  tl_system *box = NULL, *quad = NULL;
  tl_world *w = make_world(robots, &box, &quad);
  if (!w) return;
  tl_recorder_options o;
  o = tl_recorder_options_default();
  o.every = 7;
  tl_recorder *r = NULL;
  if (tl_recorder_create(w, &o, &r, &err) == TL_OK) {
    step(w, r, 700);
    TL_CHECK(tl_recorder_nframe(r) == 101, "every 7th of 700 updates + frame 0: 101 (got %lld)", tl_recorder_nframe(r));
    TL_CHECK(tl_recorder_main_system(r) == 1, "main system: the first with joints (the quadruped)");
  }
  tl_recorder_free(r);
  /* keep_frames 0: constant memory, frames still counted */
  o = tl_recorder_options_default();
  o.keep_frames = 0;
  o.fps = 100;
  r = NULL;
  if (tl_recorder_create(w, &o, &r, &err) == TL_OK) {
    step(w, r, 200); /* 200 ms at 100 fps: 20 frames after frame 0 */
    TL_CHECK(tl_recorder_nframe(r) == 1 && tl_recorder_frames_taken(r) == 21, "keep_frames 0: 1 kept, 21 taken (%lld, %lld)",
             tl_recorder_nframe(r), tl_recorder_frames_taken(r));
  }
  tl_recorder_free(r);
  /* memory: reserve_frames covers the run -> no allocation while stepping and recording */
  o = tl_recorder_options_default();
  o.reserve_frames = 200;
  r = NULL;
  if (tl_recorder_create(w, &o, &r, &err) == TL_OK) {
    step(w, r, 20); /* warm-up */
    nalloc = 0, counting = 1;
    step(w, r, 2000);
    counting = 0;
    TL_CHECK(nalloc == 0, "reserve_frames: %d allocations in 2000 steps + %lld frames", nalloc, tl_recorder_nframe(r));
  }
  tl_recorder_free(r);
  /* without reserve: amortized growth, a handful of reallocations for 1200 frames */
  o = tl_recorder_options_default();
  o.every = 1;
  r = NULL;
  if (tl_recorder_create(w, &o, &r, &err) == TL_OK) {
    nalloc = 0, counting = 1;
    step(w, r, 1200);
    counting = 0;
    /* three buffers (frames, contact offsets, contacts), each doubling: about 3 log2(n / 64) */
    TL_CHECK(nalloc > 0 && nalloc <= 24, "growth: %d allocations for %lld frames (doubling)", nalloc,
             tl_recorder_nframe(r));
  }
  tl_recorder_free(r);
  tl_world_free(w);
}

/* Recording reads the world, never changes it: the same run with a frame at every step ends in
 * the bit-identical state. */
static void check_no_influence(const char *robots) {
  tl_system *b1, *q1, *b2, *q2;
  tl_world *w1 = make_world(robots, &b1, &q1), *w2 = make_world(robots, &b2, &q2);
  tl_recorder_options o;
  o = tl_recorder_options_default();
  o.every = 1;
  tl_recorder *r = NULL;
  if (w1 && w2 && tl_recorder_create(w1, &o, &r, &err) == TL_OK) {
    int ok = step(w1, r, 600);
    for (int i = 0; i < 600 && ok; ++i) ok = tl_world_step(w2, &err) == TL_OK;
    double qa[64], qb[64], ua[64], ub[64];
    int nq = tl_system_nq(q1), nv = tl_system_nv(q1);
    tl_system_get_state(q1, qa, nq, ua, nv, NULL);
    tl_system_get_state(q2, qb, nq, ub, nv, NULL);
    TL_CHECK(ok && memcmp(qa, qb, sizeof(double) * (size_t)nq) == 0 && memcmp(ua, ub, sizeof(double) * (size_t)nv) == 0,
             "a recorded run (601 frames) ends bit-identical to an unrecorded one");
  }
  tl_recorder_free(r);
  tl_world_free(w1);
  tl_world_free(w2);
}

/* ---------------------------------------------------------------- errors, paths, world queries */

static void check_errors(void) {
  tl_world *w = NULL;
  tl_world_create(&w, &err);
  tl_recorder *r = NULL;
  tl_recorder_options o;
  o = tl_recorder_options_default();
  TL_CHECK(tl_recorder_create(NULL, &o, &r, &err) == TL_ERR_ARGUMENT && !r, "NULL world refused");
  o.fps = -1;
  TL_CHECK(tl_recorder_create(w, &o, &r, &err) == TL_ERR_ARGUMENT && strstr(err.message, "fps"), "fps < 0: %s",
           err.message);
  o = tl_recorder_options_default();
  o.main_system = 3;
  TL_CHECK(tl_recorder_create(w, &o, &r, &err) == TL_ERR_ARGUMENT && strstr(err.message, "main_system"),
           "main_system out of range: %s", err.message);
  /* an empty world records too (no main system) */
  TL_CHECK(tl_recorder_create(w, NULL, &r, &err) == TL_OK && tl_recorder_main_system(r) == -1, "empty world");
  tl_recorder_free(r);

  char path[600];
  snprintf(path, sizeof path, "%s/missing/run.html", tmpdir);
  TL_CHECK(tl_recorder_check_path(path, "--record", &err) == TL_ERR_IO && strstr(err.message, path) &&
               strstr(err.message, "does not exist"),
           "missing folder: %s", err.message);
  TL_CHECK(tl_recorder_check_path(tmpdir, "--record", &err) == TL_ERR_IO && strstr(err.message, "folder"),
           "a folder: %s", err.message);
  snprintf(path, sizeof path, "%s/ok.html", tmpdir);
  TL_CHECK(tl_recorder_check_path(path, "--record", &err) == TL_OK, "writable path: %s", err.message);
  struct stat st;
  TL_CHECK(stat(path, &st) != 0, "the check leaves no file behind");

  /* world read-back */
  double size[3] = {0.4, 0.6, 0.1}, pos[3] = {1, 2, 0.05}, R[9] = {0, -1, 0, 1, 0, 0, 0, 0, 1};
  double h[6] = {0, 0.1, 0.2, 0.3, 0.4, 0.5};
  int ok = tl_world_add_static_geom(w, TL_GEOM_BOX, size, pos, R, "wood", NULL, &err) == TL_OK &&
           tl_world_add_heightmap(w, 3, 2, -1, -2, 0.5, 0.25, h, 6, "terrain", NULL, &err) == TL_OK;
  TL_CHECK(ok && tl_world_nstatic(w) == 2, "two statics");
  tl_geom_type type;
  double gs[3], gp[3], gR[9];
  const char *mat = NULL;
  int hm = 7;
  TL_CHECK(tl_world_static_geom(w, 0, &type, gs, gp, gR, &mat, &hm, &err) == TL_OK && type == TL_GEOM_BOX &&
               gs[1] == 0.6 && gp[1] == 2 && gR[1] == -1 && strcmp(mat, "wood") == 0 && hm == -1,
           "static box read back");
  TL_CHECK(tl_world_static_geom(w, 1, &type, NULL, NULL, NULL, &mat, &hm, &err) == TL_OK &&
               type == TL_GEOM_HEIGHTMAP && hm == 0 && strcmp(mat, "terrain") == 0,
           "heightmap geom read back");
  int nx, ny;
  double x0, y0, dx, dy;
  const double *hh = NULL;
  TL_CHECK(tl_world_heightmap(w, 0, &nx, &ny, &x0, &y0, &dx, &dy, &hh, &err) == TL_OK && nx == 3 && ny == 2 &&
               x0 == -1 && y0 == -2 && dx == 0.5 && dy == 0.25 && hh[5] == 0.5,
           "heightmap read back");
  TL_CHECK(tl_world_static_geom(w, 2, NULL, NULL, NULL, NULL, NULL, NULL, &err) == TL_ERR_ARGUMENT,
           "bad static index refused");
  TL_CHECK(tl_world_system(w, 0) == NULL && tl_world_nsystem(w) == 0, "no systems");
  tl_world_free(w);
}

/* ---------------------------------------------------------------- meshes */

static void check_decimation(void) {
  enum { NU = 100, NV = 100 };
  tl_rec_mesh_part p = {0};
  p.nvert = NU * (NV + 1);
  p.vert = malloc((size_t)p.nvert * 3 * sizeof(float));
  p.tri = malloc((size_t)NU * NV * 2 * 3 * sizeof(uint32_t));
  double r = 0.5;
  for (int j = 0; j <= NV; ++j)
    for (int i = 0; i < NU; ++i) {
      double th = 3.14159265358979323846 * j / NV, ph = 2 * 3.14159265358979323846 * i / NU;
      float *v = p.vert + 3 * (j * NU + i);
      v[0] = (float)(r * sin(th) * cos(ph)), v[1] = (float)(r * sin(th) * sin(ph)), v[2] = (float)(r * cos(th));
    }
  for (int j = 0; j < NV; ++j)
    for (int i = 0; i < NU; ++i) {
      uint32_t a = (uint32_t)(j * NU + i), b = (uint32_t)(j * NU + (i + 1) % NU), c = a + NU, d = b + NU;
      uint32_t *t = p.tri + 3 * p.ntri;
      t[0] = a, t[1] = c, t[2] = b, t[3] = b, t[4] = c, t[5] = d;
      p.ntri += 2;
    }
  int before = p.ntri;
  TL_CHECK(tl_rec_mesh_decimate(&p, 2000) == 0, "decimate");
  double rmin = 1e9, rmax = 0;
  for (int v = 0; v < p.nvert; ++v) {
    double d = sqrt(p.vert[3 * v] * p.vert[3 * v] + p.vert[3 * v + 1] * p.vert[3 * v + 1] +
                    p.vert[3 * v + 2] * p.vert[3 * v + 2]);
    rmin = fmin(rmin, d), rmax = fmax(rmax, d);
  }
  int badidx = 0;
  for (int t = 0; t < 3 * p.ntri; ++t) badidx += p.tri[t] >= (uint32_t)p.nvert;
  printf("decimation: %d -> %d triangles, %d vertices, radius %.4f .. %.4f\n", before, p.ntri, p.nvert, rmin, rmax);
  TL_CHECK(p.ntri <= 2000 && p.ntri >= 500, "within budget and not collapsed (%d triangles)", p.ntri);
  TL_CHECK(badidx == 0, "indices in range");
  TL_CHECK(rmax <= r + 1e-6 && rmin > 0.9 * r, "still a sphere: radius %.4f .. %.4f of %.2f", rmin, rmax, r);
  free(p.vert);
  free(p.tri);
}

static void check_collada(const char *shared) {
  char file[1024];
  snprintf(file, sizeof file, "%s/anymal_c/meshes/base.dae", shared);
  if (access(file, R_OK) != 0) {
    tl_test_skip("%s absent: COLLADA axes not checked", file);
    return;
  }
  double scale[3] = {1, 1, 1};
  tl_rec_mesh m;
  char why[256];
  TL_CHECK(tl_rec_mesh_read(file, scale, 100000, &m, why, sizeof why) == 0, "read base.dae: %s", why);
  float lo[3] = {1e9, 1e9, 1e9}, hi[3] = {-1e9, -1e9, -1e9};
  for (int i = 0; i < m.npart; ++i)
    for (int v = 0; v < m.part[i].nvert; ++v)
      for (int k = 0; k < 3; ++k)
        lo[k] = fminf(lo[k], m.part[i].vert[3 * v + k]), hi[k] = fmaxf(hi[k], m.part[i].vert[3 * v + k]);
  printf("base.dae extent: x %.3f, y %.3f, z %.3f m\n", hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
  /* the collision box of ANYmal C's base is 0.58 x 0.14 x 0.18 m: long along x, a little taller than wide */
  TL_CHECK(hi[0] - lo[0] > 2 * (hi[1] - lo[1]) && hi[0] - lo[0] > 2 * (hi[2] - lo[2]),
           "base.dae is long along x (Z-up kept, not turned to Y-up)");
  TL_CHECK(fabs((hi[2] + lo[2]) / 2) < 0.1, "and centred in z");
  tl_rec_mesh_free(&m);
}

int main(int argc, char **argv) {
  const char *robots = argc > 1 ? argv[1] : "robots";
  const char *shared = argc > 2 ? argv[2] : "../shared/robots";
  snprintf(tmpdir, sizeof tmpdir, "/tmp/talus-test-record-XXXXXX");
  if (!mkdtemp(tmpdir)) return 1;
  check_page(robots);
  check_schedule(robots);
  check_no_influence(robots);
  check_errors();
  check_decimation();
  check_collada(shared);
  rmdir(tmpdir);
  return tl_test_finish();
}
