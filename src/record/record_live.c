/* The live view (talus/record.h, tl_viewer): the viewer page served over
 * HTTP and the frames streamed over a WebSocket, both on one local port,
 * with libwebsockets (a server thread runs its event loop).
 *
 * Protocol (one WebSocket per browser, any path, subprotocol "talus": browsers
 * refuse a handshake that names a subprotocol they did not ask for, and
 * libwebsockets names its protocol): the server first sends the
 * scene as one text message (the recording's JSON without frame arrays,
 * fragmented in 64 KiB pieces), then, whenever a newer frame has been
 * published, one binary message: uint32 frame counter, uint32 number of
 * contacts nc, the frame's F float32, then 9 nc float32 (little-endian, as
 * the machine). A browser that reads slowly gets only the newest frame when
 * it is ready again. Text messages from browsers are control messages
 * (record_control.c, docs/viewer.md): each is answered with a status message;
 * a client that sent one also gets the parameter list and a status message
 * every TL_LIVE_STATUS_PERIOD_MS (clients that never talk get frames only). HTTP serves one
 * request per connection (the connection is closed after the answer, so no
 * pipelined request is parsed: tests/fuzz/regressions/viewer/).
 *
 * Connections: the server holds at most TL_LIVE_MAX_CONNECTIONS sockets (fewer when the process may
 * open few files: a quarter of RLIMIT_NOFILE), so clients can never take the file descriptors the
 * simulation needs (its recording, CSV, snapshots) nor drive libwebsockets into its accept loop's
 * EMFILE spin. A connection accepted when every slot is taken evicts the oldest connection that
 * has not finished its request (silent, a partial request: an abandoned or half-open one, which
 * libwebsockets alone would keep for 10 s; at most TL_LIVE_EVICTING of them closing at a time);
 * when every slot holds an answered request or an open WebSocket, or too many evicted ones are
 * still closing, the new connection is closed at once (tests/test_live_connections.c).
 *
 * Threads: tl_viewer_publish (the simulation's thread) copies the frame into
 * a buffer under a mutex and wakes the server with lws_cancel_service, the
 * only libwebsockets call that is safe from another thread; every other
 * libwebsockets call runs on the server thread. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "record/record_control.h"
#include "record/record_internal.h"

#ifdef TALUS_HAVE_LWS

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/resource.h>

#include <libwebsockets.h>

/* Contacts sent per frame at most (the rest of a frame's contacts are left out of the live view). */
#define TL_LIVE_MAX_CONTACTS 4096
#define TL_LIVE_CHUNK 65536
/* Status messages to talking clients at least this often (ms). */
#define TL_LIVE_STATUS_PERIOD_MS 500
/* Answers a client may have pending (a flood beyond it gets fewer answers). */
#define TL_LIVE_REPLIES 16
/* Contacts kept per frame of the history (the rest are left out of late joiners' and saved frames). */
#define TL_LIVE_HIST_CONTACTS 64
/* The history holds at most this many frames (tl_viewer_set_history refuses more). */
#define TL_LIVE_HIST_MAX_FRAMES 10000000LL
/* Connections (HTTP or WebSocket) the server holds at most (issue 26 asks for 50 watching clients). */
#define TL_LIVE_MAX_CONNECTIONS 128
/* Evicted connections still closing at most (evicted ones close on the next service: beyond this many,
   new connections are closed at once, so the sockets stay bounded while a flood is accepted). */
#define TL_LIVE_EVICTING 8

/* One accepted connection (server thread only). */
typedef struct live_slot {
  struct lws *wsi;        /* NULL: free */
  long long order;        /* accept order: the smallest is the oldest */
  int answered;           /* its request was complete: an HTTP answer or a WebSocket (never evicted) */
} live_slot;

struct tl_viewer {
  struct lws_context *ctx;
  pthread_t thread;
  atomic_int stop, nclient, running;
  atomic_llong nconnection;
  int port;
  char bind[256];         /* the --bind address ("" when the default 127.0.0.1) */
  char *page;             /* the page without the data marker */
  size_t page_len;
  const char *scene;      /* the recorder's scene JSON (the recorder outlives the viewer) */
  size_t scene_len;
  int floats;             /* F */
  pthread_mutex_t lock;
  unsigned char *pending; /* LWS_PRE + message, written by publish under lock */
  size_t pending_len;
  long long seq;          /* frames published (under lock) */
  unsigned char *out;     /* LWS_PRE + message: the server thread's copy */
  size_t out_len;
  long long out_seq;
  unsigned char chunk[LWS_PRE + TL_LIVE_CHUNK];
  /* control (record_control.c); server thread only below ctl */
  tl_live_control *ctl;
  atomic_int shared;      /* --shared-control: every client controls */
  struct lws *controller; /* the client in control, NULL: nobody */
  long long tick;         /* status periods elapsed */
  const struct lws_protocols *proto; /* ours, for the periodic status */
  lws_sorted_usec_list_t sul;
  /* history (late joiners, GET /recording.html): the last hist_cap distinct frames published,
     ring sequence numbers [hist_first, hist_end), slot = number % hist_cap; under lock */
  double hist_seconds, fps;
  long long hist_cap, hist_first, hist_end;
  long long hist_taken;   /* the recorder's frame counter of the newest appended (-1: none) */
  float *hist_frames;     /* [hist_cap * F] */
  float *hist_contacts;   /* [hist_cap * TL_LIVE_HIST_CONTACTS * 9] */
  int *hist_nc;           /* [hist_cap] */
  uint32_t *hist_counter; /* [hist_cap] the frame counter sent with each */
  long long pending_hist, out_hist; /* hist_end after the pending / out frame was appended */
  unsigned char *hist_msg; /* LWS_PRE + one history message (server thread) */
  /* accepted connections (server thread): at most max_conn of slots[] in use */
  live_slot slots[TL_LIVE_MAX_CONNECTIONS];
  int max_conn;
  long long accepted;     /* connections accepted so far (the slots' order) */
  struct lws *evicting[TL_LIVE_EVICTING]; /* evicted, not yet closed (NULL: free) */
};

typedef struct live_session {
  int websocket;
  size_t pos;             /* bytes of the page (HTTP) or of the scene (WebSocket) sent */
  long long sent_seq;     /* last frame sent */
  long long hist_next, hist_stop; /* history frames still to send (ring numbers) */
  long long hist_sent;    /* ring number + 1 of the last history frame sent: that frame is not sent again */
  char *body;             /* HTTP: a malloc'd answer (the recording), NULL: the page */
  size_t body_len;
  /* control messages (server thread) */
  int talking;            /* sent a message: gets status and parameters */
  int in_msg, rx_over, rx_binary;
  size_t rx_len;
  char rx[TL_CTL_MAX_MESSAGE];
  int nreply, reply_head; /* pending answers: reply_error[i][0] == 0 for error null */
  char reply_error[TL_LIVE_REPLIES][200];
  long long tick_sent, params_sent;
} live_session;

static size_t message_cap(int floats) {
  return 8 + ((size_t)floats + (size_t)TL_LIVE_MAX_CONTACTS * TL_REC_CONTACT_FLOATS) * sizeof(float);
}

/* ------------------------------------------------------------ who may connect */

/* Cross-site WebSocket hijacking and DNS rebinding: a page of another site
 * open in any browser on this machine can reach a local port. Only requests
 * addressed to this server (Host: 127.0.0.1:PORT, localhost:PORT,
 * [::1]:PORT or the --bind address with PORT; any literal IP address when it
 * serves every interface, 0.0.0.0 or ::) are answered, and only WebSockets
 * opened by the page itself (Origin http://<such a host>) or by a client that
 * sends no Origin (not a browser). A name that resolves here only by DNS
 * rebinding is refused, because it is not one of these. */

/* 1 if text is an IPv4 address a.b.c.d. */
static int is_ipv4(const char *t, size_t n) {
  int dots = 0, digits = 0;
  for (size_t i = 0; i < n; ++i) {
    if (t[i] == '.') {
      if (!digits) return 0;
      dots++, digits = 0;
    } else if (t[i] >= '0' && t[i] <= '9') {
      if (++digits > 3) return 0;
    } else {
      return 0;
    }
  }
  return dots == 3 && digits > 0;
}

static int same_ci(const char *a, size_t n, const char *b) {
  size_t m = strlen(b);
  if (n != m) return 0;
  for (size_t i = 0; i < n; ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
    if (x != y) return 0;
  }
  return 1;
}

/* 1 if `host` (a Host header value, or an Origin's host[:port]) names this server. */
static int host_ok(const tl_viewer *v, const char *host) {
  size_t n = strlen(host);
  const char *colon = NULL;
  if (host[0] == '[') { /* [v6]:port */
    const char *close = strchr(host, ']');
    if (!close) return 0;
    colon = close[1] == ':' ? close + 1 : NULL;
    if (close[1] && !colon) return 0;
  } else {
    colon = strrchr(host, ':');
  }
  size_t hn = colon ? (size_t)(colon - host) : n;
  if (colon) {
    char *end = NULL;
    long port = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end || port != v->port) return 0;
  } else if (v->port != 80) {
    return 0; /* a browser always names a port other than 80 */
  }
  if (same_ci(host, hn, "127.0.0.1") || same_ci(host, hn, "localhost") || same_ci(host, hn, "[::1]")) return 1;
  if (v->bind[0]) {
    if (same_ci(host, hn, v->bind)) return 1;
    if (host[0] == '[' && hn == strlen(v->bind) + 2 && same_ci(host + 1, hn - 2, v->bind)) return 1;
    int wildcard = strcmp(v->bind, "0.0.0.0") == 0 || strcmp(v->bind, "::") == 0;
    if (wildcard && (is_ipv4(host, hn) || host[0] == '[')) return 1; /* a literal address: no DNS involved */
  }
  return 0;
}

/* The request's header `token` into buf; 0 if absent, 1 if present, -1 if too long. */
static int header(struct lws *wsi, enum lws_token_indexes token, char *buf, int cap) {
  int len = lws_hdr_total_length(wsi, token);
  if (len <= 0) return 0;
  if (len >= cap) return -1;
  return lws_hdr_copy(wsi, buf, cap, token) < 0 ? -1 : 1;
}

/* NULL if the request may be answered, else why not. `websocket`: also check the Origin. */
static const char *refused(struct lws *wsi, const tl_viewer *v, int websocket) {
  char host[300], origin[400];
  int h = header(wsi, WSI_TOKEN_HOST, host, sizeof host);
  if (h <= 0 || !host_ok(v, host)) return "the Host header does not name this server";
  if (!websocket) return NULL;
  int o = header(wsi, WSI_TOKEN_ORIGIN, origin, sizeof origin);
  if (o < 0) return "the Origin header is too long";
  if (o == 0) return NULL; /* not a browser */
  if (strncmp(origin, "http://", 7) != 0 || !host_ok(v, origin + 7)) return "the Origin is not this server's page";
  return NULL;
}

/* ------------------------------------------------------------ HTTP */

static char *history_recording(tl_viewer *v, size_t *len);

static int http_start(struct lws *wsi, tl_viewer *v, live_session *s, const char *uri) {
  int save = strcmp(uri, "/recording.html") == 0;
  if (!save && strcmp(uri, "/") != 0 && strcmp(uri, "/index.html") != 0) {
    lws_return_http_status(wsi, HTTP_STATUS_NOT_FOUND, NULL);
    return -1; /* one request per connection (see http_more) */
  }
  s->body = NULL;
  if (save && !(s->body = history_recording(v, &s->body_len))) {
    lws_return_http_status(wsi, HTTP_STATUS_INTERNAL_SERVER_ERROR, "out of memory building the recording");
    return -1;
  }
  size_t total = s->body ? s->body_len : v->page_len;
  unsigned char buf[LWS_PRE + 1024], *start = buf + LWS_PRE, *p = start, *end = buf + sizeof buf - 1;
  if (lws_add_http_common_headers(wsi, HTTP_STATUS_OK, "text/html; charset=utf-8", (lws_filepos_t)total, &p, end))
    return 1;
  if (lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL, (const unsigned char *)"no-store", 8, &p, end))
    return 1;
  static const char disposition[] = "attachment; filename=\"talus-live.html\"";
  if (save && lws_add_http_header_by_name(wsi, (const unsigned char *)"content-disposition:",
                                          (const unsigned char *)disposition, (int)strlen(disposition), &p, end))
    return 1;
  if (lws_finalize_write_http_header(wsi, start, &p, end)) return 1;
  s->pos = 0;
  lws_callback_on_writable(wsi);
  return 0;
}

static int http_more(struct lws *wsi, tl_viewer *v, live_session *s) {
  const char *body = s->body ? s->body : v->page;
  size_t total = s->body ? s->body_len : v->page_len;
  size_t n = total - s->pos < TL_LIVE_CHUNK ? total - s->pos : TL_LIVE_CHUNK;
  int last = s->pos + n == total;
  memcpy(v->chunk + LWS_PRE, body + s->pos, n);
  if (lws_write(wsi, v->chunk + LWS_PRE, n, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) != (int)n) return 1;
  s->pos += n;
  /* One request per connection: close after the answer instead of reading a pipelined next request
     (libwebsockets 4.1 spins at 100 % CPU on some malformed pipelined requests, so the live view
     stopped serving and `talus simulate --view` never exited; tests/fuzz/regressions/viewer/). */
  if (last) return -1;
  lws_callback_on_writable(wsi);
  return 0;
}

/* ------------------------------------------------------------ WebSocket */

static int ws_scene(struct lws *wsi, tl_viewer *v, live_session *s) {
  size_t n = v->scene_len - s->pos < TL_LIVE_CHUNK ? v->scene_len - s->pos : TL_LIVE_CHUNK;
  int first = s->pos == 0, last = s->pos + n == v->scene_len;
  int mode = (first ? LWS_WRITE_TEXT : LWS_WRITE_CONTINUATION) | (last ? 0 : LWS_WRITE_NO_FIN);
  memcpy(v->chunk + LWS_PRE, v->scene + s->pos, n);
  if (lws_write(wsi, v->chunk + LWS_PRE, n, (enum lws_write_protocol)mode) != (int)n) return -1;
  s->pos += n;
  lws_callback_on_writable(wsi);
  return 0;
}

/* ------------------------------------------------------------ control messages (record_control.c) */

static int control_of(const tl_viewer *v, const struct lws *wsi) {
  if (atomic_load(&v->shared)) return 2;
  return v->controller == wsi ? 1 : v->controller ? 0 : -1;
}

static void reply(live_session *s, const char *error) {
  if (s->nreply == TL_LIVE_REPLIES) return; /* a flood: the answers already due stand for it */
  char *e = s->reply_error[(s->reply_head + s->nreply++) % TL_LIVE_REPLIES];
  snprintf(e, sizeof s->reply_error[0], "%s", error ? error : "");
}

/* A whole message arrived in s->rx: validate, queue, answer. */
static void ws_message_done(struct lws *wsi, tl_viewer *v, live_session *s) {
  char why[200];
  const char *error = NULL;
  tl_viewer_event ev;
  s->talking = 1;
  if (s->rx_over) {
    tl_ctl_count_dropped(v->ctl);
    snprintf(why, sizeof why, "message larger than %d bytes: dropped", TL_CTL_MAX_MESSAGE);
    error = why;
  } else if (s->rx_binary) {
    tl_ctl_count_dropped(v->ctl);
    error = "binary message: control messages are JSON text, dropped";
  } else {
    tl_ctl_kind k = tl_ctl_parse(v->ctl, s->rx, s->rx_len, &ev, why, sizeof why);
    if (k == TL_CTL_MALFORMED) {
      tl_ctl_count_dropped(v->ctl);
      error = why;
    } else if (k == TL_CTL_EVENT) {
      if (!tl_ctl_accepts(v->ctl)) {
        error = "this view takes no controls (a model inspection, or a program that does not poll)";
      } else if (control_of(v, wsi) == 0) {
        error = "another client controls the simulation (this one watches)";
      } else {
        if (!atomic_load(&v->shared)) v->controller = wsi;
        if (tl_ctl_push(v->ctl, &ev) != 0) error = "too many control messages pending: dropped";
      }
    }
  }
  reply(s, error);
  lws_callback_on_writable(wsi);
}

static int ws_receive(struct lws *wsi, tl_viewer *v, live_session *s, const void *in, size_t len) {
  if (!s->in_msg) {
    s->in_msg = 1;
    s->rx_len = 0;
    s->rx_over = 0;
    s->rx_binary = lws_frame_is_binary(wsi);
  }
  if (!s->rx_over && len > 0) {
    if (len > sizeof s->rx - s->rx_len)
      s->rx_over = 1;
    else
      memcpy(s->rx + s->rx_len, in, len), s->rx_len += len;
  }
  if (lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0) {
    s->in_msg = 0;
    ws_message_done(wsi, v, s);
  }
  return 0;
}

static int ws_write_text(struct lws *wsi, unsigned char *buf, size_t len) {
  return lws_write(wsi, buf + LWS_PRE, len, LWS_WRITE_TEXT) == (int)len ? 0 : -1;
}

/* Parameters, answers and periodic status of a talking client, one message per call: 0 or -1
 * (written, or failed), 1 when nothing was due. */
static int ws_control_writable(struct lws *wsi, tl_viewer *v, live_session *s) {
  if (!s->talking) return 1;
  if (tl_ctl_params_version(v->ctl) > s->params_sent) {
    size_t n = 0;
    long long version = 0;
    char *json = tl_ctl_params_json(v->ctl, &n, &version);
    unsigned char *buf = json ? malloc(LWS_PRE + n) : NULL;
    int r = -1;
    if (buf) {
      memcpy(buf + LWS_PRE, json, n);
      r = ws_write_text(wsi, buf, n);
      s->params_sent = version;
    }
    free(json);
    free(buf);
    lws_callback_on_writable(wsi);
    return r;
  }
  int periodic = s->tick_sent < v->tick;
  if (s->nreply > 0 || periodic) {
    unsigned char buf[LWS_PRE + TL_CTL_STATUS_CAP];
    const char *error = NULL;
    int answer = s->nreply > 0;
    if (answer) {
      error = s->reply_error[s->reply_head];
      s->reply_head = (s->reply_head + 1) % TL_LIVE_REPLIES;
      s->nreply--;
      if (!error[0]) error = NULL;
    }
    s->tick_sent = v->tick;
    size_t n = tl_ctl_status_json(v->ctl, error, control_of(v, wsi), answer, (char *)buf + LWS_PRE, TL_CTL_STATUS_CAP);
    lws_callback_on_writable(wsi);
    return ws_write_text(wsi, buf, n);
  }
  return 1;
}

/* Every TL_LIVE_STATUS_PERIOD_MS: status to every talking client. */
static void status_tick(lws_sorted_usec_list_t *sul) {
  tl_viewer *v = lws_container_of(sul, tl_viewer, sul);
  v->tick++;
  lws_callback_on_writable_all_protocol(v->ctx, v->proto);
  lws_sul_schedule(v->ctx, 0, &v->sul, status_tick, TL_LIVE_STATUS_PERIOD_MS * LWS_US_PER_MS);
}

tl_live_control *tl_viewer_control(tl_viewer *v) { return v ? v->ctl : NULL; }
void tl_viewer_wake(tl_viewer *v) {
  if (v && v->ctx) lws_cancel_service(v->ctx);
}
void tl_viewer_set_shared_control(tl_viewer *v, int shared) {
  if (v) atomic_store(&v->shared, shared != 0);
}

/* One history message (ring number k, under lock) into v->hist_msg + LWS_PRE; its length. */
static size_t history_message(tl_viewer *v, long long k) {
  long long slot = k % v->hist_cap;
  int nc = v->hist_nc[slot];
  unsigned char *m = v->hist_msg + LWS_PRE;
  uint32_t head[2] = {v->hist_counter[slot], (uint32_t)nc};
  size_t fb = (size_t)v->floats * sizeof(float), cb = (size_t)nc * TL_REC_CONTACT_FLOATS * sizeof(float);
  memcpy(m, head, sizeof head);
  memcpy(m + 8, v->hist_frames + slot * v->floats, fb);
  memcpy(m + 8 + fb, v->hist_contacts + slot * TL_LIVE_HIST_CONTACTS * TL_REC_CONTACT_FLOATS, cb);
  return 8 + fb + cb;
}

/* The next history frame of a late joiner: 0 or -1 (written, or failed), 1 when none is left. */
static int ws_history(struct lws *wsi, tl_viewer *v, live_session *s) {
  size_t n = 0;
  pthread_mutex_lock(&v->lock);
  if (s->hist_next < v->hist_first) s->hist_next = v->hist_first; /* overwritten meanwhile, or cleared */
  long long k = s->hist_next;
  if (k < s->hist_stop && k < v->hist_end) n = history_message(v, k);
  pthread_mutex_unlock(&v->lock);
  if (!n) {
    s->hist_next = s->hist_stop;
    return 1;
  }
  s->hist_next = k + 1;
  s->hist_sent = k + 1;
  lws_callback_on_writable(wsi);
  return lws_write(wsi, v->hist_msg + LWS_PRE, n, LWS_WRITE_BINARY) == (int)n ? 0 : -1;
}

static int ws_writable(struct lws *wsi, tl_viewer *v, live_session *s) {
  if (s->pos < v->scene_len) return ws_scene(wsi, v, s);
  int r = ws_control_writable(wsi, v, s);
  if (r != 1) return r;
  if (s->hist_next < s->hist_stop && (r = ws_history(wsi, v, s)) != 1) return r;
  if (v->out_seq <= s->sent_seq || v->out_len == 0) return 0;
  s->sent_seq = v->out_seq;
  if (v->out_hist <= s->hist_sent) return 0; /* this frame was the history's last */
  if (lws_write(wsi, v->out + LWS_PRE, v->out_len, LWS_WRITE_BINARY) != (int)v->out_len) return -1;
  return 0;
}

/* A frame was published: take the newest into the server's own buffer and wake every browser. */
static void take_pending(tl_viewer *v) {
  pthread_mutex_lock(&v->lock);
  if (v->seq > v->out_seq) {
    memcpy(v->out + LWS_PRE, v->pending + LWS_PRE, v->pending_len);
    v->out_len = v->pending_len;
    v->out_seq = v->seq;
    v->out_hist = v->pending_hist;
  }
  pthread_mutex_unlock(&v->lock);
}

/* ------------------------------------------------------------ connection slots */

static live_slot *slot_of(tl_viewer *v, const struct lws *wsi) {
  for (int i = 0; i < v->max_conn; ++i)
    if (v->slots[i].wsi == wsi) return &v->slots[i];
  return NULL;
}

/* A connection was accepted: 0 if it has a slot (evicting the oldest connection without a complete
 * request when all are taken), -1 if it must be closed (every slot holds an answered request or a
 * WebSocket, or TL_LIVE_EVICTING evicted connections are still closing). */
static int slot_take(tl_viewer *v, struct lws *wsi) {
  live_slot *free_slot = NULL, *oldest = NULL;
  struct lws **gone = NULL; /* a free place in the evicting list */
  for (int i = 0; i < v->max_conn; ++i) {
    live_slot *t = &v->slots[i];
    if (!t->wsi) {
      if (!free_slot) free_slot = t;
    } else if (!t->answered && (!oldest || t->order < oldest->order)) {
      oldest = t;
    }
  }
  for (int i = 0; i < TL_LIVE_EVICTING && !gone; ++i)
    if (!v->evicting[i]) gone = &v->evicting[i];
  if (!free_slot && oldest && gone) {
    /* closed on the next service (the documented way to close another connection); its slot goes to
       the new one now, its socket counts in the evicting list until it is closed */
    lws_set_timeout(oldest->wsi, PENDING_TIMEOUT_HOLDING_AH, LWS_TO_KILL_ASYNC);
    *gone = oldest->wsi;
    oldest->wsi = NULL;
    free_slot = oldest;
  }
  if (!free_slot) return -1;
  free_slot->wsi = wsi;
  free_slot->order = v->accepted++;
  free_slot->answered = 0;
  return 0;
}

static void slot_answered(tl_viewer *v, const struct lws *wsi) {
  live_slot *t = slot_of(v, wsi);
  if (t) t->answered = 1;
}

static void slot_release(tl_viewer *v, const struct lws *wsi) {
  live_slot *t = slot_of(v, wsi);
  if (t) t->wsi = NULL;
  for (int i = 0; i < TL_LIVE_EVICTING; ++i)
    if (v->evicting[i] == wsi) v->evicting[i] = NULL;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len) {
  tl_viewer *v = lws_context_user(lws_get_context(wsi));
  live_session *s = user;
  switch (reason) {
  case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
    return slot_take(v, wsi); /* non-zero: libwebsockets closes the new connection */
  case LWS_CALLBACK_WSI_DESTROY:
    slot_release(v, wsi);
    return 0;
  case LWS_CALLBACK_HTTP:
    slot_answered(v, wsi);
    if (refused(wsi, v, 0)) {
      lws_return_http_status(wsi, HTTP_STATUS_FORBIDDEN, "the Host header does not name this server");
      return -1; /* one request per connection, refused ones too (see http_more) */
    }
    return http_start(wsi, v, s, in ? (const char *)in : "/");
  case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
    return refused(wsi, v, 1) ? 1 : 0; /* non-zero: no upgrade, the connection is closed */
  case LWS_CALLBACK_HTTP_WRITEABLE:
    return s ? http_more(wsi, v, s) : 0;
  case LWS_CALLBACK_CLOSED_HTTP:
    if (s && !s->websocket) free(s->body), s->body = NULL;
    break;
  case LWS_CALLBACK_ESTABLISHED:
    slot_answered(v, wsi);
    memset(s, 0, sizeof(*s));
    s->websocket = 1;
    pthread_mutex_lock(&v->lock); /* a late joiner first gets the history kept so far */
    s->hist_next = v->hist_first;
    s->hist_stop = v->hist_end;
    pthread_mutex_unlock(&v->lock);
    atomic_fetch_add(&v->nclient, 1);
    atomic_fetch_add(&v->nconnection, 1);
    lws_callback_on_writable(wsi);
    return 0;
  case LWS_CALLBACK_SERVER_WRITEABLE:
    return ws_writable(wsi, v, s);
  case LWS_CALLBACK_RECEIVE:
    return s && s->websocket ? ws_receive(wsi, v, s, in, len) : 0;
  case LWS_CALLBACK_CLOSED:
    if (s && s->websocket) atomic_fetch_sub(&v->nclient, 1), s->websocket = 0;
    if (v->controller == wsi) v->controller = NULL; /* control is free again */
    return 0;
  case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
    take_pending(v);
    lws_callback_on_writable_all_protocol(v->ctx, lws_get_protocol(wsi));
    return 0;
  default:
    break;
  }
  (void)len;
  return lws_callback_http_dummy(wsi, reason, user, in, len);
}

static const struct lws_protocols protocols[] = {
    {"talus", callback, sizeof(live_session), TL_CTL_MAX_MESSAGE, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static void *serve(void *arg) {
  tl_viewer *v = arg;
  lws_sul_schedule(v->ctx, 0, &v->sul, status_tick, TL_LIVE_STATUS_PERIOD_MS * LWS_US_PER_MS);
  while (!atomic_load(&v->stop))
    if (lws_service(v->ctx, 0) < 0) break;
  atomic_store(&v->running, 0);
  return NULL;
}

/* The page with the data marker removed: a page without data connects to the server. */
static char *live_page(size_t *len) {
  const char *page = (const char *)tl_viewer_page;
  const char *mark = strstr(page, TL_REC_PAGE_MARKER);
  size_t ml = strlen(TL_REC_PAGE_MARKER);
  char *out = malloc(tl_viewer_page_len + 1);
  if (!out || !mark) {
    free(out);
    return NULL;
  }
  size_t head = (size_t)(mark - page);
  memcpy(out, page, head);
  memcpy(out + head, mark + ml, tl_viewer_page_len - head - ml);
  *len = tl_viewer_page_len - ml;
  out[*len] = '\0';
  return out;
}

/* GET /recording.html: the history as a recording (the page of tl_recorder_write_html), built on
 * the server thread from a copy of the ring taken under the lock. malloc'd; NULL: no memory. */
static char *history_recording(tl_viewer *v, size_t *len) {
  pthread_mutex_lock(&v->lock);
  long long cap = v->hist_cap > 0 ? v->hist_cap : 0;
  pthread_mutex_unlock(&v->lock);
  size_t F = (size_t)v->floats;
  float *frames = malloc(((size_t)cap + 1) * F * sizeof(float));
  float *contacts = malloc(((size_t)cap * TL_LIVE_HIST_CONTACTS + 1) * TL_REC_CONTACT_FLOATS * sizeof(float));
  uint32_t *cstart = malloc(((size_t)cap + 2) * sizeof(uint32_t));
  char *page = NULL;
  if (frames && contacts && cstart) {
    long long n = 0, nc = 0;
    cstart[0] = 0;
    pthread_mutex_lock(&v->lock);
    /* at most the `cap` frames allocated for (tl_viewer_set_history may have grown the ring since) */
    long long first = v->hist_end - cap > v->hist_first ? v->hist_end - cap : v->hist_first;
    for (long long k = first; k < v->hist_end; ++k, ++n) {
      long long slot = k % v->hist_cap;
      int c = v->hist_nc[slot];
      memcpy(frames + n * F, v->hist_frames + slot * v->floats, F * sizeof(float));
      memcpy(contacts + nc * TL_REC_CONTACT_FLOATS, v->hist_contacts + slot * TL_LIVE_HIST_CONTACTS * TL_REC_CONTACT_FLOATS,
             (size_t)c * TL_REC_CONTACT_FLOATS * sizeof(float));
      nc += c;
      cstart[n + 1] = (uint32_t)nc;
    }
    pthread_mutex_unlock(&v->lock);
    page = tl_rec_page_from_frames(v->scene, v->scene_len, frames, n, v->floats, cstart, contacts, nc, len);
  }
  free(frames);
  free(contacts);
  free(cstart);
  return page;
}

/* The ring's buffers for `cap` frames of F floats into *fr etc.; 0 or -1 (no memory, nothing kept). */
static int history_alloc(long long cap, int F, float **fr, float **co, int **nc, uint32_t **ctr) {
  size_t c = cap > 0 ? (size_t)cap : 1;
  *fr = malloc(c * (size_t)F * sizeof(float));
  *co = malloc(c * TL_LIVE_HIST_CONTACTS * TL_REC_CONTACT_FLOATS * sizeof(float));
  *nc = malloc(c * sizeof(int));
  *ctr = malloc(c * sizeof(uint32_t));
  if (*fr && *co && *nc && *ctr) return 0;
  free(*fr), free(*co), free(*nc), free(*ctr);
  *fr = NULL, *co = NULL, *nc = NULL, *ctr = NULL;
  return -1;
}

/* Frames the history holds for `seconds` of simulated time at the recorder's frame rate. */
static long long history_frames(double seconds, double fps) {
  if (!(seconds > 0)) return 0;
  double n = ceil(seconds * fps) + 1; /* both ends: N s at fps spans N fps + 1 frames */
  return n > (double)TL_LIVE_HIST_MAX_FRAMES ? TL_LIVE_HIST_MAX_FRAMES + 1 : (long long)n;
}

tl_status tl_viewer_set_history(tl_viewer *v, double seconds, tl_error *err) {
  if (!v) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "viewer", "viewer must not be NULL");
  if (!(seconds >= 0) || !isfinite(seconds))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "seconds",
                        "history of %g s: expected a finite number of seconds >= 0", seconds);
  long long cap = history_frames(seconds, v->fps);
  if (cap > TL_LIVE_HIST_MAX_FRAMES)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "seconds",
                        "history of %g s at %g frames/s: more than %lld frames", seconds, v->fps,
                        TL_LIVE_HIST_MAX_FRAMES);
  float *fr, *co;
  int *nc;
  uint32_t *ctr;
  if (history_alloc(cap, v->floats, &fr, &co, &nc, &ctr) != 0)
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory for %lld frames of history", cap);
  pthread_mutex_lock(&v->lock);
  /* keep the newest frames that fit, under their ring numbers */
  long long first = v->hist_end - cap > v->hist_first ? v->hist_end - cap : v->hist_first;
  for (long long k = first; k < v->hist_end; ++k) {
    long long from = k % v->hist_cap, to = k % cap;
    memcpy(fr + to * v->floats, v->hist_frames + from * v->floats, (size_t)v->floats * sizeof(float));
    memcpy(co + to * TL_LIVE_HIST_CONTACTS * TL_REC_CONTACT_FLOATS,
           v->hist_contacts + from * TL_LIVE_HIST_CONTACTS * TL_REC_CONTACT_FLOATS,
           (size_t)v->hist_nc[from] * TL_REC_CONTACT_FLOATS * sizeof(float));
    nc[to] = v->hist_nc[from];
    ctr[to] = v->hist_counter[from];
  }
  if (cap == 0) first = v->hist_end;
  float *ofr = v->hist_frames, *oco = v->hist_contacts;
  int *onc = v->hist_nc;
  uint32_t *octr = v->hist_counter;
  v->hist_frames = fr, v->hist_contacts = co, v->hist_nc = nc, v->hist_counter = ctr;
  v->hist_cap = cap, v->hist_first = first, v->hist_seconds = seconds;
  pthread_mutex_unlock(&v->lock);
  free(ofr), free(oco), free(onc), free(octr);
  return TL_OK;
}

double tl_viewer_history(const tl_viewer *v) { return v ? v->hist_seconds : 0; }

static tl_status create_fail(tl_viewer *v, tl_status st) {
  tl_viewer_free(v);
  return st;
}

tl_status tl_viewer_create(const tl_recorder *rec, const char *host, int port, tl_viewer **out, tl_error *err) {
  if (out) *out = NULL;
  if (!rec || !out)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, rec ? "out" : "rec", "%s must not be NULL", rec ? "out" : "rec");
  if (port < 0 || port > 65535)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "port", "port %d: expected 0 (any free port) .. 65535", port);
  if (!tl_recorder_have_viewer())
    return tl_error_set(err, TL_ERR_UNSUPPORTED, NULL, 0, NULL,
                        "the live view needs the web viewer, and this Talus was built without it (web/node_modules "
                        "was missing when CMake ran: run scripts/setup.sh, then CMake again)");
  tl_viewer *v = calloc(1, sizeof(*v));
  if (!v) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  pthread_mutex_init(&v->lock, NULL);
  v->scene = rec->scene;
  v->scene_len = rec->scene_len;
  v->floats = rec->L.floats;
  v->page = live_page(&v->page_len);
  v->pending = malloc(LWS_PRE + message_cap(v->floats));
  v->out = malloc(LWS_PRE + message_cap(v->floats));
  v->ctl = tl_ctl_create(rec->world);
  /* the history's frame rate: the recorder's, or one frame per step (fps 0 or `every`) */
  double dt = tl_world_timestep(rec->world);
  v->fps = rec->opt.every > 0 || !(rec->opt.fps > 0) ? (dt > 0 ? 1.0 / dt : 1000.0) : rec->opt.fps;
  v->hist_seconds = TL_VIEWER_DEFAULT_HISTORY;
  v->hist_cap = history_frames(v->hist_seconds, v->fps);
  v->hist_taken = -1;
  v->hist_msg = malloc(LWS_PRE + 8 + ((size_t)v->floats + TL_LIVE_HIST_CONTACTS * TL_REC_CONTACT_FLOATS) * sizeof(float));
  int hist_bad = v->hist_cap > TL_LIVE_HIST_MAX_FRAMES ||
                 history_alloc(v->hist_cap, v->floats, &v->hist_frames, &v->hist_contacts, &v->hist_nc,
                               &v->hist_counter) != 0;
  if (!v->page || !v->pending || !v->out || !v->ctl || !v->hist_msg || hist_bad) {
    create_fail(v, TL_ERR_MEMORY);
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  }
  /* the connection slots: at most a quarter of the files this process may open (at least 8) */
  struct rlimit nofile;
  v->max_conn = TL_LIVE_MAX_CONNECTIONS;
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY && nofile.rlim_cur / 4 < (rlim_t)v->max_conn)
    v->max_conn = nofile.rlim_cur / 4 < 8 ? 8 : (int)(nofile.rlim_cur / 4);
  signal(SIGPIPE, SIG_IGN); /* a browser closing its socket must never end the simulation */
  lws_set_log_level(LLL_ERR, NULL);
  struct lws_context_creation_info info;
  memset(&info, 0, sizeof info);
  info.port = port;
  info.iface = host ? host : "127.0.0.1";
  if (host && strlen(host) >= sizeof v->bind) {
    create_fail(v, TL_ERR_ARGUMENT);
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "host", "bind address '%.60s...' is too long", host);
  }
  snprintf(v->bind, sizeof v->bind, "%s", host ? host : "");
  info.protocols = protocols;
  v->proto = &protocols[0];
  info.user = v;
  info.gid = -1;
  info.uid = -1;
  info.options = LWS_SERVER_OPTION_DISABLE_IPV6;
  v->ctx = lws_create_context(&info);
  struct lws_vhost *vh = v->ctx ? lws_get_vhost_by_name(v->ctx, "default") : NULL;
  v->port = vh ? lws_get_vhost_listen_port(vh) : -1;
  if (!v->ctx || v->port <= 0) {
    create_fail(v, TL_ERR_IO);
    return tl_error_set(err, TL_ERR_IO, NULL, 0, "port",
                        "cannot serve the live view on %s port %d (address in use, or not an address of this "
                        "machine?)", info.iface, port);
  }
  atomic_store(&v->running, 1);
  if (pthread_create(&v->thread, NULL, serve, v) != 0) {
    atomic_store(&v->running, 0);
    create_fail(v, TL_ERR_MEMORY);
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "cannot start the live view's server thread");
  }
  *out = v;
  tl_viewer_publish(v, rec);
  return TL_OK;
}

int tl_viewer_port(const tl_viewer *v) { return v ? v->port : -1; }
int tl_viewer_nclient(const tl_viewer *v) { return v ? atomic_load(&v->nclient) : 0; }
long long tl_viewer_nconnection(const tl_viewer *v) { return v ? atomic_load(&v->nconnection) : 0; }

void tl_viewer_publish(tl_viewer *v, const tl_recorder *rec) {
  if (!v || !rec || rec->L.floats != v->floats) return;
  const float *contacts;
  int nc;
  const float *frame = tl_rec_latest(rec, &contacts, &nc);
  if (!frame) return;
  if (nc > TL_LIVE_MAX_CONTACTS) nc = TL_LIVE_MAX_CONTACTS;
  pthread_mutex_lock(&v->lock);
  unsigned char *m = v->pending + LWS_PRE;
  uint32_t head[2] = {(uint32_t)(rec->taken & 0xffffffffu), (uint32_t)nc};
  memcpy(m, head, sizeof head);
  memcpy(m + 8, frame, (size_t)v->floats * sizeof(float));
  memcpy(m + 8 + (size_t)v->floats * sizeof(float), contacts, (size_t)nc * TL_REC_CONTACT_FLOATS * sizeof(float));
  v->pending_len = 8 + ((size_t)v->floats + (size_t)nc * TL_REC_CONTACT_FLOATS) * sizeof(float);
  v->seq++;
  if (rec->taken != v->hist_taken) { /* a new frame: into the history (a re-publish is not) */
    long long newest = v->hist_end - 1;
    if (v->hist_end > v->hist_first && frame[0] < v->hist_frames[(newest % v->hist_cap) * v->floats])
      v->hist_first = v->hist_end; /* time went back (reset, restore): the history restarts */
    if (v->hist_cap > 0) {
      long long slot = v->hist_end % v->hist_cap;
      int hc = nc < TL_LIVE_HIST_CONTACTS ? nc : TL_LIVE_HIST_CONTACTS;
      memcpy(v->hist_frames + slot * v->floats, frame, (size_t)v->floats * sizeof(float));
      memcpy(v->hist_contacts + slot * TL_LIVE_HIST_CONTACTS * TL_REC_CONTACT_FLOATS, contacts,
             (size_t)hc * TL_REC_CONTACT_FLOATS * sizeof(float));
      v->hist_nc[slot] = hc;
      v->hist_counter[slot] = head[0];
    }
    v->hist_end++;
    if (v->hist_end - v->hist_first > v->hist_cap) v->hist_first = v->hist_end - v->hist_cap;
    v->hist_taken = rec->taken;
  }
  v->pending_hist = v->hist_end;
  pthread_mutex_unlock(&v->lock);
  if (v->ctx) lws_cancel_service(v->ctx);
}

void tl_viewer_free(tl_viewer *v) {
  if (!v) return;
  if (atomic_load(&v->running)) {
    atomic_store(&v->stop, 1);
    lws_cancel_service(v->ctx);
    pthread_join(v->thread, NULL);
  }
  if (v->ctx) lws_context_destroy(v->ctx);
  pthread_mutex_destroy(&v->lock);
  free(v->page);
  free(v->pending);
  free(v->out);
  free(v->hist_msg);
  free(v->hist_frames);
  free(v->hist_contacts);
  free(v->hist_nc);
  free(v->hist_counter);
  tl_ctl_free(v->ctl);
  free(v);
}

#else /* built without libwebsockets */

tl_status tl_viewer_create(const tl_recorder *rec, const char *host, int port, tl_viewer **out, tl_error *err) {
  (void)rec, (void)host, (void)port;
  if (out) *out = NULL;
  return tl_error_set(err, TL_ERR_UNSUPPORTED, NULL, 0, NULL,
                      "this Talus was built without libwebsockets (Debian: libwebsockets-dev), so without the "
                      "live view; recordings (--record) still work");
}
int tl_viewer_port(const tl_viewer *v) { (void)v; return -1; }
int tl_viewer_nclient(const tl_viewer *v) { (void)v; return 0; }
long long tl_viewer_nconnection(const tl_viewer *v) { (void)v; return 0; }
void tl_viewer_publish(tl_viewer *v, const tl_recorder *rec) { (void)v, (void)rec; }
void tl_viewer_free(tl_viewer *v) { (void)v; }
tl_live_control *tl_viewer_control(tl_viewer *v) { (void)v; return NULL; }
void tl_viewer_wake(tl_viewer *v) { (void)v; }
void tl_viewer_set_shared_control(tl_viewer *v, int shared) { (void)v, (void)shared; }
tl_status tl_viewer_set_history(tl_viewer *v, double seconds, tl_error *err) {
  (void)v, (void)seconds;
  return tl_error_set(err, TL_ERR_UNSUPPORTED, NULL, 0, NULL, "this Talus was built without the live view");
}
double tl_viewer_history(const tl_viewer *v) { (void)v; return 0; }

#endif
