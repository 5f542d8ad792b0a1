/* libFuzzer harness of the live viewer's client input (talus/record.h,
 * tl_viewer; src/record/record_live.c). The viewer has no handler of
 * messages of its own: it ignores what browsers send over the WebSocket
 * (record_live.c, "Protocol"). What it parses from clients is the HTTP
 * request (libwebsockets' parser, then record_live.c's callback: the URI,
 * the headers, the WebSocket upgrade with its subprotocol) and the WebSocket
 * frames after an upgrade (libwebsockets, then the callback). So this
 * harness fuzzes the server end to end: one viewer serves a recording of
 * robots/worlds/boxes_and_balls.xml on 127.0.0.1 (a free port), and every
 * input is sent as the bytes of one TCP connection (every "@PORT@" in it
 * replaced by the port, so seeds can carry valid Host headers), the
 * connection half-closed and the answer read until the server closes it
 * (at most 250 ms). Invariant: the server keeps serving: the first input
 * and every 32nd after it, a well-formed GET / must get "HTTP/1.1 200".
 * Seeds: tests/fuzz/seeds/viewer/ (HTTP requests, a WebSocket upgrade with
 * client frames). Without libwebsockets or the web viewer in this build the
 * program prints SKIPPED and exits 77. */
#include "fuzz_util.h"

#include <arpa/inet.h>
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

/* Send data on a new connection, half-close, read the answer (up to cap
 * bytes kept in out, NUL-terminated) until EOF or the deadline. */
static size_t exchange(const void *data, size_t size, char *out, size_t cap, double seconds) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  FUZZ_ASSERT(fd >= 0, "socket");
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  FUZZ_ASSERT(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "cannot connect to the viewer on port %d", port);
  size_t sent = 0, got = 0;
  double end = now() + seconds;
  while (sent < size) {
    ssize_t n = send(fd, (const char *)data + sent, size - sent, MSG_NOSIGNAL);
    if (n <= 0) break; /* the server closed early: its answer */
    sent += (size_t)n;
  }
  shutdown(fd, SHUT_WR);
  char buf[4096];
  for (double left; (left = end - now()) > 0;) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, (int)(left * 1000) + 1) <= 0) break;
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    if (out && got + 1 < cap) {
      size_t k = (size_t)n < cap - 1 - got ? (size_t)n : cap - 1 - got;
      memcpy(out + got, buf, k);
      got += k;
    }
  }
  if (out && cap) out[got] = '\0';
  close(fd);
  return got;
}

static void check_alive(void) {
  char req[256], ans[64];
  int n = snprintf(req, sizeof req, "GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", port);
  exchange(req, (size_t)n, ans, sizeof ans, 5.0);
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
  exchange(msg, len, NULL, 0, 0.25);
  free(msg);
  if (ninput++ % 32 == 0) check_alive();
  return 0;
}
