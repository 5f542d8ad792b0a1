/* Talus recordings and the live view: see the robot.
 *
 * A tl_recorder attaches to a world and keeps, once, the geometry of
 * everything in it (each system's URDF <visual> elements: boxes, spheres,
 * cylinders, capsules and STL / OBJ / DAE meshes read with assimp with their
 * material colours; its collision geoms and convex hulls; its frames, joint
 * axes and limits; the world's static geoms and heightmaps), and then, frame
 * by frame, every body's pose, every contact (point, normal, force), each
 * system's centre of mass, the total energy and, for one "main" system, base
 * velocity, joint positions, joint torques and per-body contact normal
 * forces. tl_recorder_write_html writes all of it into ONE self-contained
 * HTML file (three.js and uPlot embedded at build time from web/): it opens
 * from disk with no network and no server, plays the motion back in 3D and
 * plots the time series. tl_viewer (talus/viewer.h) serves the same page on a
 * local port and streams the frames over a WebSocket while the simulation runs.
 *
 * Memory: everything is allocated by tl_recorder_create, except the frame
 * buffers, which grow geometrically (doubling) as frames are added, so a
 * recording costs amortized O(1) allocations per frame and none at all when
 * tl_recorder_options.reserve_frames covers the run (contacts: 16 per frame
 * reserved, then doubling). Frames are float32 (positions keep about 7
 * significant digits: 0.01 mm at 100 m).
 *
 * Use (C):
 *   tl_recorder_options o = tl_recorder_options_default();  o.fps = 60;
 *   tl_recorder *rec;     tl_recorder_create(world, &o, &rec, &err);  // frame 0: the current state
 *   for (...) { tl_world_step(world, &err); tl_recorder_update(rec, &err); }
 *   tl_recorder_write_html(rec, "run.html", &err);  tl_recorder_free(rec);
 *
 * The recorder reads the world through the public API only; it never
 * changes the simulation (the queries it calls refresh caches the next step
 * recomputes anyway), so a recorded run is bit-identical to an unrecorded one.
 * The systems and static geoms of the world must not change after
 * tl_recorder_create (tl_recorder_update then fails with TL_ERR_INVALID). */
#ifndef TALUS_RECORD_H
#define TALUS_RECORD_H

#include "talus/world.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_recorder tl_recorder;

typedef struct tl_recorder_options {
  /* Frames per second of simulated time taken by tl_recorder_update: a frame
   * when the world time reaches the next multiple of 1/fps (default 60).
   * 0: a frame at every update. */
  double fps;
  /* > 0: instead, a frame at every `every`-th call of tl_recorder_update
   * (default 0: by fps). */
  int every;
  /* The system whose base and joints are plotted: its index in the world,
   * or -1 (default) for the first system with joints (else system 0). */
  int main_system;
  /* Visual meshes with more triangles than this (per mesh file, default
   * 60000) are decimated by vertex clustering to at most this many. */
  int max_mesh_triangles;
  /* Frames to allocate at creation (default 0: grow as needed). */
  long long reserve_frames;
  /* 1 (default): keep every frame (a recording); 0: keep only the latest
   * (a live view of an endless run, constant memory). */
  int keep_frames;
  /* Title of the page (NULL: the main system's robot name). Copied. */
  const char *title;
} tl_recorder_options;

/* The defaults above, by value. */
tl_recorder_options tl_recorder_options_default(void);
/* Deprecated: the names before issue 22. tl_record_options is
 * tl_recorder_options; tl_record_options_default fills *opt with
 * tl_recorder_options_default(). */
typedef tl_recorder_options tl_record_options;
void tl_record_options_default(tl_recorder_options *opt);

/* Attach a recorder to `world` (which must outlive it) and take frame 0 from
 * the current state. Reads every visual mesh file (a link whose visual mesh
 * is missing or unreadable is drawn with its collision geometry instead,
 * with a warning naming the file, tl_recorder_warning). opt NULL: defaults. Errors:
 * TL_ERR_ARGUMENT (NULL world / out, fps < 0 or not finite, every < 0,
 * main_system out of range, max_mesh_triangles < 4, reserve_frames < 0),
 * TL_ERR_MEMORY. */
tl_status tl_recorder_create(tl_world *world, const tl_recorder_options *opt, tl_recorder **out,
                             tl_error *err);
void tl_recorder_free(tl_recorder *rec);

/* Call after each tl_world_step (or tl_world_integrate2): takes a frame when
 * one is due (see fps / every). *taken (may be NULL) is set to 1 when it
 * did. No allocation beyond the amortized growth of the frame buffers.
 * TL_ERR_INVALID if systems or static geoms were added since creation,
 * TL_ERR_MEMORY if the buffers cannot grow (the frame is then dropped and
 * the recording so far kept). */
tl_status tl_recorder_update(tl_recorder *rec, int *taken, tl_error *err);
/* The world's time went back (a snapshot restored, a reset in the live view): the schedule of
 * frames starts again at the current time and a frame of it is taken now. With keep_frames,
 * the frames kept before stay (the recording's time then goes back too). */
tl_status tl_recorder_rewind(tl_recorder *rec, tl_error *err);
/* Take a frame of the current state now, whether due or not. */
tl_status tl_recorder_capture(tl_recorder *rec, tl_error *err);

/* Mark the recording as ended by a divergence (the run stopped at the last
 * finite state): `message` (copied; e.g. "diverged at step 12, t = 0.011 s:
 * u[7] (joint LF_KFE velocity) became non-finite") goes into the page (its
 * title and a banner; JSON key "diverged"), and as the last line of the CSV,
 * "# diverged: MESSAGE". NULL clears the mark. TL_ERR_ARGUMENT (rec NULL),
 * TL_ERR_MEMORY. */
tl_status tl_recorder_mark_diverged(tl_recorder *rec, const char *message, tl_error *err);
/* The mark's message, NULL when not marked. */
const char *tl_recorder_diverged(const tl_recorder *rec);

/* Frames kept so far (with keep_frames 0: 1 after the first frame). */
long long tl_recorder_nframe(const tl_recorder *rec);
/* Frames taken since creation (also counts frames not kept). */
long long tl_recorder_frames_taken(const tl_recorder *rec);
/* Simulated time of the newest frame (s); NAN before any. */
double tl_recorder_time(const tl_recorder *rec);
/* The system the plots follow (see main_system), -1 when the world has none. */
int tl_recorder_main_system(const tl_recorder *rec);
/* Warnings gathered at creation (missing visual meshes, decimation). */
int tl_recorder_nwarning(const tl_recorder *rec);
const char *tl_recorder_warning(const tl_recorder *rec, int i);

/* Write the recording as one self-contained HTML page (file://, no network).
 * A regular file (or a new one) is written next to `path` under a temporary
 * name and renamed, so a failure leaves no partial file; a character device
 * or FIFO (/dev/null, a named pipe) is written through and never replaced; a
 * symbolic link is followed (its target obeys the same rules, the link stays)
 * and a link to nothing, a folder, block device or socket are refused.
 * TL_ERR_UNSUPPORTED if this build has no
 * viewer page (web/node_modules was missing when CMake ran: run
 * scripts/setup.sh, then CMake again); TL_ERR_IO naming the path otherwise. */
tl_status tl_recorder_write_html(const tl_recorder *rec, const char *path, tl_error *err);
/* Write the time series as CSV (a header line of column names, then one line
 * per kept frame): t, base_x/y/z, base_vx/vy/vz, q_<coord> and tau_<dof> of
 * the main system's joints, fn_<link> (contact normal force on each of its
 * bodies, N), kinetic, potential and total energy (J, all systems). The path
 * is written by the rules of tl_recorder_write_html. */
tl_status tl_recorder_write_csv(const tl_recorder *rec, const char *path, tl_error *err);

/* 1 if this build embeds the viewer page, 0 if not (see tl_recorder_write_html). */
int tl_recorder_have_viewer(void);

/* Check, before a long run, that a file can be written at `path` by the
 * rules of tl_recorder_write_html: its folder exists and a file can be
 * created there now (a probe file is created and removed at once), or it is
 * a writable character device or FIFO; folders, block devices, sockets and
 * symbolic links to nothing are refused. `what` names the option in
 * the message ("--record"). TL_ERR_IO with a message naming the path and the
 * reason. */
tl_status tl_recorder_check_path(const char *path, const char *what, tl_error *err);

/* Deprecated: the names before issue 22 (one prefix per header: tl_recorder_*). */
#define tl_record_have_viewer tl_recorder_have_viewer
#define tl_record_check_path tl_recorder_check_path

#ifdef __cplusplus
}
#endif

/* The live view (tl_viewer_*) was declared here before issue 22; it has its own header now. */
#include "talus/viewer.h"
#endif
