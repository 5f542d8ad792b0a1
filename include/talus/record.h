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
 * plots the time series. tl_viewer serves the same page on a local port and
 * streams the frames over a WebSocket while the simulation runs.
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
int tl_record_have_viewer(void);

/* Check, before a long run, that a file can be written at `path` by the
 * rules of tl_recorder_write_html: its folder exists and a file can be
 * created there now (a probe file is created and removed at once), or it is
 * a writable character device or FIFO; folders, block devices, sockets and
 * symbolic links to nothing are refused. `what` names the option in
 * the message ("--record"). TL_ERR_IO with a message naming the path and the
 * reason. */
tl_status tl_record_check_path(const char *path, const char *what, tl_error *err);

/* ---- the live view: the page served on a local port, frames over a WebSocket ---- */
typedef struct tl_viewer tl_viewer;

/* Serve the viewer page for `rec`'s world at http://HOST:PORT/ (host NULL:
 * "127.0.0.1", the loopback address only; port 0: any free port, see
 * tl_viewer_port). A server thread (libwebsockets) answers browsers; each
 * browser gets the geometry, then the newest frame whenever one is
 * published. A slow browser skips frames and a closed one is dropped: the
 * simulation never waits for a browser and never fails because of one
 * (SIGPIPE is ignored). TL_ERR_UNSUPPORTED when built without libwebsockets
 * or without the page, TL_ERR_IO when the address cannot be bound. */
tl_status tl_viewer_create(const tl_recorder *rec, const char *host, int port, tl_viewer **out,
                           tl_error *err);
/* The port it listens on. */
int tl_viewer_port(const tl_viewer *viewer);
/* Seconds of simulated time a new browser receives first (default). */
#define TL_VIEWER_DEFAULT_HISTORY 10.0
/* History (issue 26): the server keeps the frames published during the last
 * `seconds` of simulated time (default TL_VIEWER_DEFAULT_HISTORY; 0: none) in a
 * ring of ceil(seconds x fps) + 1 frames (the recorder's fps; one per time step
 * when it takes a frame at every update), at most 64 contacts each, allocated
 * here and never while publishing. A browser that connects gets them (oldest
 * first, as ordinary frame messages) after the scene and before the live
 * frames, and GET /recording.html answers the self-contained recording
 * (tl_recorder_write_html's page) of those frames. A frame earlier than the
 * newest kept (a reset, a restore) empties it first. Call before stepping
 * (it allocates); the newest frames kept so far stay. Errors: TL_ERR_ARGUMENT
 * (seconds < 0 or not finite, more than 10^7 frames), TL_ERR_MEMORY. */
tl_status tl_viewer_set_history(tl_viewer *viewer, double seconds, tl_error *err);
/* Its seconds. */
double tl_viewer_history(const tl_viewer *viewer);
/* Hand the recorder's newest frame to the server (a copy; cheap, no
 * allocation, never blocks on the network). Call after tl_recorder_update
 * took a frame. */
void tl_viewer_publish(tl_viewer *viewer, const tl_recorder *rec);
/* Browsers connected now, and WebSocket connections accepted since creation. */
int tl_viewer_nclient(const tl_viewer *viewer);
long long tl_viewer_nconnection(const tl_viewer *viewer);
/* ---- the live view as a control panel (issue 26): events from the page ----
 * Browsers send JSON text messages (docs/viewer.md, "Protocol"): pause, run,
 * step {n}, speed {factor}, reset, force {body, point, force, duration},
 * param {name, value}. The server thread validates each one (type, ranges,
 * finite numbers, 4 KiB at most; a malformed one is dropped and counted,
 * never queued), lets only the controlling client act (the first one that
 * sends a control message, until it leaves; every client with
 * tl_viewer_set_shared_control), answers it with a status message and queues
 * it as a tl_viewer_event for the program driving the simulation, which takes
 * them with tl_viewer_poll and decides what they mean (talus simulate --view:
 * see docs/viewer.md). Nothing here ever blocks on the network. */
typedef enum tl_viewer_event_type {
  TL_VIEWER_EVENT_PAUSE = 1, /* stop simulated time */
  TL_VIEWER_EVENT_RUN = 2,   /* run again */
  TL_VIEWER_EVENT_STEP = 3,  /* take exactly n steps, then stay paused */
  TL_VIEWER_EVENT_SPEED = 4, /* pace simulated time at `factor` x real time */
  TL_VIEWER_EVENT_RESET = 5, /* back to the initial state */
  TL_VIEWER_EVENT_FORCE = 6, /* push a body */
  TL_VIEWER_EVENT_PARAM = 7, /* set a declared parameter (tl_viewer_set_params) */
  TL_VIEWER_EVENT_SNAPSHOT = 8, /* save the current state (listed in the status, tl_viewer_status.snapshot_time) */
  TL_VIEWER_EVENT_RESTORE = 9   /* restore saved state number n (0 = the oldest listed) */
} tl_viewer_event_type;

/* Steps one step message may ask for, at most. */
#define TL_VIEWER_MAX_STEP 100000
/* Real-time factors a speed message may ask for (0 means as fast as possible). */
#define TL_VIEWER_MIN_SPEED 0.05
#define TL_VIEWER_MAX_SPEED 4.0
/* force messages: |force| (N), |point| coordinates (m) and duration (s, > 0) at most. */
#define TL_VIEWER_MAX_FORCE 1e5
#define TL_VIEWER_MAX_POINT 1e4
#define TL_VIEWER_MAX_DURATION 10.0
/* Saved states a status lists at most. */
#define TL_VIEWER_MAX_SNAPSHOTS 8

typedef struct tl_viewer_event {
  tl_viewer_event_type type;
  long long n;      /* STEP: 1 .. TL_VIEWER_MAX_STEP; RESTORE: 0 .. nsnapshot - 1 of the last status */
  double factor;    /* SPEED: TL_VIEWER_MIN_SPEED .. TL_VIEWER_MAX_SPEED, or 0: as fast as possible */
  int system, body; /* FORCE: the system (index in the world) and body (tl_model_body_index of the link) */
  int id;           /* FORCE: 0, or 1 .. 15: this force replaces the one before with the same id (a drag) */
  double point[3];  /* FORCE: where it acts, world frame (m), fixed to the body from then on */
  double force[3];  /* FORCE: N, world frame, constant for `duration` */
  double duration;  /* FORCE: s of simulated time, (0, TL_VIEWER_MAX_DURATION] */
  char name[48];    /* PARAM: one of the declared names */
  double value;     /* PARAM: within its declared range */
} tl_viewer_event;

/* The oldest pending event into *event: 1, or 0 when there is none (or viewer is NULL). Never
 * blocks, no allocation; call it from the simulation's loop as often as you like. */
int tl_viewer_poll(tl_viewer *viewer, tl_viewer_event *event);

/* What the simulation tells the page (status messages, at least once a second and in answer to
 * every message; the page's status line and solver panel). */
typedef struct tl_viewer_status {
  double time;     /* simulated time, s */
  long long steps; /* steps since the initial state (a reset starts again at 0) */
  int paused;      /* 1 while simulated time stands still */
  double speed;    /* real-time factor asked for; 0: as fast as possible */
  double rtf;      /* real-time factor measured (simulated s per wall s), NAN if unknown */
  tl_solver_stats solver; /* of the last step */
  int nsnapshot;   /* states saved (SNAPSHOT events kept), 0 .. TL_VIEWER_MAX_SNAPSHOTS */
  double snapshot_time[TL_VIEWER_MAX_SNAPSHOTS]; /* their simulated times, s, oldest first */
} tl_viewer_status;
/* Publish the simulation's status (a copy; cheap, never blocks). */
void tl_viewer_set_status(tl_viewer *viewer, const tl_viewer_status *status);

/* A tunable parameter the page shows as a slider. */
typedef struct tl_viewer_param {
  char name[48];   /* unique, non-empty */
  char unit[16];   /* "m/s", "rad", "" ... */
  double min, max; /* finite, min < max */
  double value;    /* the current value, within [min, max] */
} tl_viewer_param;
/* Declare the parameters (copied; replaces the list before; n 0 .. 64). The server sends them to
 * every client ("params" message) and refuses param messages naming another parameter or a value
 * outside its range. TL_ERR_ARGUMENT naming the parameter for an empty or repeated name, a range
 * that is not finite or empty, a value outside it, or n out of range. */
tl_status tl_viewer_set_params(tl_viewer *viewer, const tl_viewer_param *params, int n, tl_error *err);
/* 1: every client may control (--shared-control); 0 (default): one client at a time. */
void tl_viewer_set_shared_control(tl_viewer *viewer, int shared);
/* Control messages dropped as malformed since creation. */
long long tl_viewer_ndropped(const tl_viewer *viewer);
/* Stop the server thread, close every connection and free. NULL allowed. */
void tl_viewer_free(tl_viewer *viewer);

#ifdef __cplusplus
}
#endif
#endif
