/* libFuzzer harness of the live viewer's client input (talus/record.h,
 * tl_viewer; src/record/record_live.c). What it parses from clients is the
 * HTTP request (libwebsockets' parser, then record_live.c's callback: the
 * URI, the headers, the WebSocket upgrade with its subprotocol) and the
 * WebSocket frames after an upgrade (libwebsockets, then the callback: text
 * messages are control messages, record_control.c, fuzzed on their own by
 * fuzz_control.c). So this
 * harness fuzzes the server end to end: one viewer serves a recording of
 * robots/worlds/boxes_and_balls.xml on 127.0.0.1 (a free port), and every
 * input is sent as the bytes of one TCP connection (every "@PORT@" in it
 * replaced by the port, so seeds can carry valid Host headers), the
 * connection half-closed and the answer read until the server closes it
 * (at most 250 ms). Invariant: the server keeps serving: the first input
 * and every 32nd after it, a well-formed GET / must get "HTTP/1.1 200"
 * within 5 s; a refused connection (ECONNREFUSED, a reset before the
 * answer) or one not accepted in 5 s is a finding.
 * The client's own limits are not: libFuzzer's SIGALRM (-timeout) has no
 * SA_RESTART, so connect, poll and recv may return EINTR (the harness
 * resumes them; this was the open finding "a fresh connection refused
 * after ~112k connections": the harness's, not the server's), and at
 * thousands of connections a second the client may run out of local ports
 * (EADDRNOTAVAIL, TIME_WAIT) or descriptors: the harness waits and retries,
 * skips that input (or check) after 1 s (5 s) and counts it, and stops only
 * if no check could connect for 32 checks in a row (printed as the
 * harness's problem, not the server's).
 * Seeds: tests/fuzz/seeds/viewer/ (HTTP requests, a WebSocket upgrade with
 * client frames). Without libwebsockets or the web viewer in this build the
 * program prints SKIPPED and exits 77. */
#include "fuzz_util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>

#include "talus/record.h"
#include "talus/scene.h"

static tl_world *world;
static tl_recorder *rec;
static tl_viewer *viewer;
static int port;
static long ninput;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* 1 if connect/socket's errno is the client's own limit (no local port, no descriptor, no buffer):
 * not the server's doing. */
static int client_side(int e) {
  return e == EADDRNOTAVAIL || e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM || e == EAGAIN;
}

static long client_skips; /* inputs or checks skipped for the client's own limits */

/* A connection to the viewer by `end` (monotonic s), resuming after signals: the descriptor (non-blocking),
 * or -1 with *err the errno (client_side(*err): the client's limit, retried until `end`; else the
 * server's refusal, ETIMEDOUT: not accepted by `end`). */
static int dial(double end, int *err) {
  for (;;) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int e = fd < 0 ? errno : 0;
    if (fd >= 0) {
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
      struct sockaddr_in a;
      memset(&a, 0, sizeof a);
      a.sin_family = AF_INET;
      a.sin_port = htons((uint16_t)port);
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) return fd;
      e = errno;
      if (e == EINPROGRESS || e == EINTR) { /* EINTR: the connection goes on (connect(2)) */
        e = ETIMEDOUT;
        for (double left; (left = end - now()) > 0;) {
          struct pollfd p = {fd, POLLOUT, 0};
          int r = poll(&p, 1, (int)(left * 1000) + 1);
          if (r < 0 && errno == EINTR) continue;
          if (r <= 0) break;
          socklen_t len = sizeof e;
          if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0) e = errno;
          if (e == 0) return fd;
          break;
        }
      }
      close(fd);
    }
    if (!client_side(e) || now() >= end) {
      *err = e;
      return -1;
    }
    struct timespec t = {0, 10000000}; /* 10 ms: TIME_WAIT ports free up, descriptors close */
    nanosleep(&t, NULL);
  }
}

/* Send data on a new connection, half-close, read the answer (up to cap
 * bytes kept in out, NUL-terminated) until EOF or the deadline. 0, or -1
 * with *err the connect's errno (see dial; `connect_seconds` to connect). */
static int exchange(const void *data, size_t size, char *out, size_t cap, double connect_seconds, double seconds,
                    int *err) {
  if (out && cap) out[0] = '\0';
  int fd = dial(now() + connect_seconds, err);
  if (fd < 0) return -1;
  size_t sent = 0, got = 0;
  double end = now() + seconds;
  while (sent < size && now() < end) {
    ssize_t n = send(fd, (const char *)data + sent, size - sent, MSG_NOSIGNAL);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
      struct pollfd p = {fd, POLLOUT, 0};
      poll(&p, 1, 10);
      continue;
    }
    if (n <= 0) break; /* the server closed early: its answer */
    sent += (size_t)n;
  }
  shutdown(fd, SHUT_WR);
  char buf[4096];
  for (double left; (left = end - now()) > 0;) {
    struct pollfd p = {fd, POLLIN, 0};
    int r = poll(&p, 1, (int)(left * 1000) + 1);
    if (r < 0 && errno == EINTR) continue; /* a signal (libFuzzer's SIGALRM): not the server's answer */
    if (r <= 0) break;
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) break;
    if (out && got + 1 < cap) {
      size_t k = (size_t)n < cap - 1 - got ? (size_t)n : cap - 1 - got;
      memcpy(out + got, buf, k);
      got += k;
    }
  }
  if (out && cap) out[got] = '\0';
  close(fd);
  return 0;
}

static void check_alive(void) {
  static int unchecked; /* checks in a row the client could not connect for */
  char req[256], ans[64];
  int n = snprintf(req, sizeof req, "GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", port);
  int err = 0;
  if (exchange(req, (size_t)n, ans, sizeof ans, 5.0, 5.0, &err) != 0) {
    FUZZ_ASSERT(client_side(err), "the viewer refused a fresh connection on port %d: %s", port, strerror(err));
    client_skips++;
    FUZZ_ASSERT(++unchecked < 32, "the harness could not open a connection for %d checks in a row (%s): the "
                "client's limits (local ports, descriptors), not the server's", unchecked, strerror(err));
    return;
  }
  unchecked = 0;
  FUZZ_ASSERT(strncmp(ans, "HTTP/1.1 200", 12) == 0, "the viewer no longer serves its page: answer '%.40s'", ans);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  signal(SIGPIPE, SIG_IGN);
  tl_error err;
  FUZZ_ASSERT(!tl_scene_load(TALUS_SOURCE_DIR "/robots/worlds/boxes_and_balls.xml", &world, NULL, &err),
              "cannot load the harness's world: %s", err.message);
  tl_recorder_options o;
  o = tl_recorder_options_default();
  o.keep_frames = 0;
  FUZZ_ASSERT(!tl_recorder_create(world, &o, &rec, &err), "recorder: %s", err.message);
  tl_status st = tl_viewer_create(rec, "127.0.0.1", 0, &viewer, &err);
  if (st == TL_ERR_UNSUPPORTED) {
    printf("SKIPPED: no live viewer in this build (%s)\n", err.message);
    exit(77);
  }
  FUZZ_ASSERT(!st, "tl_viewer_create: %s", err.message);
  port = tl_viewer_port(viewer);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* "@PORT@" -> the port (at most 5 digits for 6 bytes: the text never grows) */
  char *msg = malloc(size + 1), num[8];
  FUZZ_ASSERT(msg, "out of memory");
  int nl = snprintf(num, sizeof num, "%d", port);
  size_t len = 0;
  for (size_t i = 0; i < size;) {
    if (size - i >= 6 && memcmp(data + i, "@PORT@", 6) == 0) {
      memcpy(msg + len, num, (size_t)nl);
      len += (size_t)nl, i += 6;
    } else {
      msg[len++] = (char)data[i++];
    }
  }
  int err = 0;
  if (exchange(msg, len, NULL, 0, 1.0, 0.25, &err) != 0) {
    FUZZ_ASSERT(client_side(err), "the viewer refused a connection on port %d: %s", port, strerror(err));
    if (client_skips++ % 1000 == 0)
      fprintf(stderr, "fuzz_viewer: an input skipped: the client cannot connect (%s; %ld so far)\n", strerror(err),
              client_skips);
  }
  free(msg);
  if (ninput++ % 32 == 0) check_alive();
  return 0;
}
