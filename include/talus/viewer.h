/* Talus live view: the viewer page of a recording (talus/record.h) served on
 * a local port, frames streamed over a WebSocket while the simulation runs,
 * and the page's control events (pause, step, push, sliders) handed back to
 * the program (docs/viewer.md). Declared in talus/record.h before issue 22,
 * which still includes this header. */
#ifndef TALUS_VIEWER_H
#define TALUS_VIEWER_H

#include "talus/record.h"
#include "talus/world.h"

#ifdef __cplusplus
extern "C" {
#endif

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
