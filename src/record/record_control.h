/* The live view's control channel (record_control.c): messages from the page
 * parsed and validated, the queue of UI events the simulation polls
 * (tl_viewer_poll), the status and parameter list the server sends back.
 * Thread-safe: the server thread parses and queues, the simulation's thread
 * polls and publishes its status; one mutex guards everything here. Internal
 * to src/record/. */
#ifndef TALUS_RECORD_CONTROL_H
#define TALUS_RECORD_CONTROL_H

#include <stddef.h>

#include "talus/record.h"

/* Largest control message accepted (bytes of one text message). */
#define TL_CTL_MAX_MESSAGE 4096
/* Events queued and not yet polled, at most (more are refused with an error). */
#define TL_CTL_QUEUE 256
/* Parameters declared at most. */
#define TL_CTL_MAX_PARAMS 64
/* Length of a status message at most (bytes, without the parameters). */
#define TL_CTL_STATUS_CAP 1536

typedef struct tl_live_control tl_live_control;

/* What a message was. */
typedef enum tl_ctl_kind {
  TL_CTL_MALFORMED = -1, /* dropped and counted: not JSON, unknown type, a bad field */
  TL_CTL_QUERY = 0,      /* {"type": "hello"} or {"type": "status"}: answered, nothing else */
  TL_CTL_EVENT = 1       /* a control message: *event filled */
} tl_ctl_kind;

/* world: the world of the viewed recorder (its models are read to resolve link names; they never
 * change). NULL if out of memory. */
tl_live_control *tl_ctl_create(const tl_world *world);
void tl_ctl_free(tl_live_control *c);

/* Parse and validate one text message (len bytes, not NUL-terminated). why (cap bytes) receives
 * the reason of a TL_CTL_MALFORMED. Only reads c's parameter list. */
tl_ctl_kind tl_ctl_parse(tl_live_control *c, const char *msg, size_t len, tl_viewer_event *event, char *why,
                         size_t cap);
/* Count a dropped message. */
void tl_ctl_count_dropped(tl_live_control *c);
/* Queue an event; 0, or -1 when the queue is full. */
int tl_ctl_push(tl_live_control *c, const tl_viewer_event *event);
/* 1 once the program has polled (tl_viewer_poll): it takes control messages; before, they are
 * refused (a pose, or a program that only watches). */
int tl_ctl_accepts(tl_live_control *c);
/* Pop the oldest event; 1 if one was returned. */
int tl_ctl_pop(tl_live_control *c, tl_viewer_event *event);
/* The status message (JSON, NUL-terminated) into buf: the simulation's last status, the dropped
 * count, error (NULL: null), control (1: this client controls, 0: another one does, -1: nobody,
 * 2: shared control), answer (1: in answer to a message, 0: periodic). Returns its length (< cap, truncated never: cap >= TL_CTL_STATUS_CAP). */
size_t tl_ctl_status_json(tl_live_control *c, const char *error, int control, int answer, char *buf, size_t cap);
/* The "params" message (the declared parameters, and "masses": each system's body masses, kg) into a malloc'ed string (*len bytes), NULL if out of memory; *version
 * receives the parameter list's version (starts at 0, each tl_viewer_set_params adds 1). */
char *tl_ctl_params_json(tl_live_control *c, size_t *len, long long *version);
/* The parameter list's version. */
long long tl_ctl_params_version(tl_live_control *c);
void tl_ctl_set_status(tl_live_control *c, const tl_viewer_status *st);
tl_status tl_ctl_set_params(tl_live_control *c, const tl_viewer_param *p, int n, tl_error *err);

/* record_live.c: the viewer's control channel (NULL when built without libwebsockets). */
tl_live_control *tl_viewer_control(tl_viewer *v);
/* record_live.c: wake the server thread (parameters or status changed). */
void tl_viewer_wake(tl_viewer *v);

#endif
