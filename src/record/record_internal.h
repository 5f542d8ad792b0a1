/* Internal: the recorder's parts (src/record/).
 *   recorder.c      options, creation, frames (poses, contacts, energies, plots)
 *   record_scene.c  the geometry, once: visuals, collision geoms, frames, joints, statics (JSON)
 *   record_mesh.c   visual meshes (read by tl_mesh_read, urdf/urdf_mesh.h), vertex-clustering decimation
 *   record_write.c  base64, the HTML page, CSV, path checks
 *   record_live.c   the live view (libwebsockets)
 *   render.c        tl_renderer (talus/render.h): the same geometry drawn offscreen by a software rasterizer
 *   viewer_page.c   (generated at build time from web/: the page template)
 *
 * The recording format (docs/viewer.md): one JSON object (the scene, with
 * base64 float32 / uint32 arrays) embedded in the page, whose member
 * "frames" holds nframe x F float32 (F = layout.floats), "contact_start"
 * nframe + 1 uint32 offsets into "contacts", 9 float32 per contact. */
#ifndef TALUS_RECORD_INTERNAL_H
#define TALUS_RECORD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "talus/record.h"

/* Floats per contact: point (3), unit normal (3, from the other object into
 * the system's geom), force on the system's body (3, N = impulse / dt). */
#define TL_REC_CONTACT_FLOATS 9
#define TL_REC_MAX_WARNINGS 64

/* Offsets of the parts of one frame (floats). */
typedef struct tl_rec_layout {
  int floats;        /* F: floats per frame */
  int time;          /* 0 */
  int poses;         /* 7 per body of every system: px py pz qx qy qz qw */
  int com;           /* 3 per system */
  int energy;        /* kinetic, potential (J, all systems) */
  int base_vel;      /* main system: world linear velocity of body 0's origin (3); -1 if none
                      * (every system's series: tl_recorder.plot) */
  int joint_q;       /* main system: q after the base's coordinates (njq) */
  int joint_tau;     /* main system: applied generalized force after the base's DOFs (njv) */
  int body_fn;       /* main system: contact normal force on each body (nbody) */
  int njq, njv, nbm; /* sizes of the three parts above */
} tl_rec_layout;

/* The plotted series of one system (offsets into a frame, floats); the main
 * system's are also the layout's base_vel .. body_fn. */
typedef struct tl_rec_sys_plot {
  int base_vel;      /* world linear velocity of body 0's origin (3) */
  int joint_q;       /* q after the base's coordinates (njq) */
  int joint_tau;     /* applied generalized force after the base's DOFs (njv) */
  int body_fn;       /* contact normal force on each body (nbm) */
  int njq, njv, nbm;
  int q0, v0;        /* coordinates / DOFs of the root joint (floating: 7 / 6, fixed: 0 / 0) */
} tl_rec_sys_plot;

struct tl_recorder {
  tl_world *world;
  tl_recorder_options opt;
  char *title;
  int nsys, nstatic;
  int *body0;        /* [nsys + 1] first pose slot of each system */
  int main;          /* main system or -1 */
  int q0, v0;        /* main: first joint coordinate / DOF after the base */
  tl_rec_layout L;
  tl_rec_sys_plot *plot; /* [nsys] the series of every system (recorder.c) */
  double *q, *u, *tau; /* scratch of the largest system (nq, nv, nv) */

  /* the scene: JSON text without the frame arrays, ends with '}' */
  char *scene;
  size_t scene_len;

  /* frames */
  float *frames;     /* [cap_frame * F] */
  long long nframe, cap_frame, taken;
  uint32_t *cstart;  /* [cap_frame + 1] */
  float *contacts;   /* [cap_contact * 9] */
  long long ncontact, cap_contact;
  long long nupdate;
  double next_time;  /* world time at which the next frame is due */
  double last_time;  /* world time of the newest frame */

  int nwarn;
  char *warn[TL_REC_MAX_WARNINGS];
  char *diverged; /* tl_recorder_mark_diverged's message, or NULL */
};

/* record_scene.c: the scene JSON (rec->scene); 0 or a status (err filled). */
tl_status tl_rec_build_scene(tl_recorder *rec, tl_error *err);
/* recorder.c: the member "plot_systems" of the scene: per system, the offsets of its
 * series in a frame and their names (docs/viewer.md); 0 or -1 (no memory). */
int tl_rec_add_plot_systems(const tl_recorder *rec, cJSON *root);
/* Append the string name + suffix (suffix may be NULL) to the JSON array arr: 0, or -1 when out of
 * memory (recorder.c). */
int tl_rec_push_name(cJSON *arr, const char *name, const char *suffix);
/* The plot series names of model m, appended to three JSON arrays: q_names one per coordinate of
 * each movable joint (its name, with .w/.x/.y/.z, .1/.2 or .x/.y/.th per coordinate of a
 * multi-coordinate joint), tau_names one per DOF, body_names one per body. 0, or -1 when out of
 * memory. The recording's "plots" and "plot_systems" both use it, so their names agree. */
int tl_rec_series_names(const tl_model *m, cJSON *q_names, cJSON *tau_names, cJSON *body_names);
/* Add a warning (printf format); silently dropped past TL_REC_MAX_WARNINGS. */
void tl_rec_warn(tl_recorder *rec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* record_mesh.c: one visual mesh file as parts of one colour each. */
typedef struct tl_rec_mesh_part {
  int nvert, ntri;
  float *vert;       /* [nvert * 3] in the mesh file's frame, scale applied (m) */
  uint32_t *tri;     /* [ntri * 3] */
  double rgba[4];    /* the part's material colour; rgba[3] < 0: none */
} tl_rec_mesh_part;

typedef struct tl_rec_mesh {
  int npart;
  tl_rec_mesh_part *part;
  int decimated_from; /* triangles before decimation, 0 if not decimated */
} tl_rec_mesh;

/* Read `file` (STL, OBJ, DAE) with the one mesh reader, tl_mesh_read
 * (urdf/urdf_mesh.h: node transforms and units applied, COLLADA files in
 * their own axes as ROS tools show them), `scale` applied; decimated to at
 * most max_tri triangles. Returns 0, or -1 with a reason in why ("out of
 * memory" when that is the reason). */
int tl_rec_mesh_read(const char *file, const double scale[3], int max_tri, tl_rec_mesh *out,
                     char *why, size_t whylen);
void tl_rec_mesh_free(tl_rec_mesh *m);
/* Vertex clustering (Rossignac and Borrel, "Multi-resolution 3D
 * approximations for rendering complex scenes", 1993): snap vertices to a
 * uniform grid, one representative (the mean) per occupied cell, drop
 * triangles that collapse; the cell grows until at most max_tri triangles
 * remain. In place; returns 0 or -1 (no memory). */
int tl_rec_mesh_decimate(tl_rec_mesh_part *p, int max_tri);

/* record_write.c */
/* Base64 (RFC 4648) of n bytes as a new JSON string item; NULL: no memory. */
cJSON *tl_rec_base64_item(const void *data, size_t n);
/* Print a cJSON tree compactly with every '<' written as \u003c, so the text
 * can sit inside an HTML <script> element. malloc'd; NULL: no memory. */
char *tl_rec_json_print(const cJSON *root, size_t *len);

/* The self-contained page of a recording (tl_recorder_write_html's bytes) holding the scene
 * (scene_len bytes, ending with '}') and the given frames (nframe x F float32), contact_start
 * (nframe + 1) and contacts (ncontact x 9): the live view's /recording.html from its history.
 * malloc'd (length in *len); NULL: no memory, or built without the page. */
char *tl_rec_page_from_frames(const char *scene, size_t scene_len, const float *frames, long long nframe, int F,
                              const uint32_t *cstart, const float *contacts, long long ncontact, size_t *len);

/* viewer_page.c (generated): the page; tl_viewer_page_len 0 when the build
 * had no web/node_modules. The marker TL_REC_PAGE_MARKER appears once, where
 * the recording's data goes. */
#define TL_REC_PAGE_MARKER "<!--TALUS-DATA-->"
extern const unsigned char tl_viewer_page[];
extern const size_t tl_viewer_page_len;

/* The newest frame (F floats) and its contacts; NULL when none was taken. */
const float *tl_rec_latest(const tl_recorder *rec, const float **contacts, int *ncontact);

#endif
