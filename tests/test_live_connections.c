/* Issue 26 (the viewer fuzz finding): abandoned connections to the live view (src/record/record_live.c,
 * "Connections"). The server runs in this process (tl_viewer on 127.0.0.1, a free port), so its sockets
 * are this process's descriptors beyond the baseline and the client sockets the test holds.
 *   1. 60 connections of each kind, kept open by the client: silent, a partial request, a partial
 *      request then a half-close, a WebSocket upgrade whose client never reads, a WebSocket with a
 *      control message then a partial frame. The server holds at most its slot count (128, or a quarter
 *      of RLIMIT_NOFILE) and serves a fresh GET / (200) meanwhile: the abandoned requests are evicted.
 *   2. The clients close them (half with a reset): the server's sockets return to the baseline and a
 *      fresh GET / is served.
 *   3. 2000 connections of the same kinds opened and closed at once (the fuzzer's pattern): the same.
 *   4. With RLIMIT_NOFILE 256 (64 slots), 150 abandoned requests held: the process can still open a
 *      file (the simulation's recording) and the page is served; all sockets return when they close.
 * Usage: test_live_connections. Skipped (77) without the live view in this build. */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "talus/record.h"
#include "talus/scene.h"
#include "test_util.h"

#define PER_KIND 60
#define KINDS 5

static int port;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void pause_s(double s) {
  struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

/* Open descriptors of this process. */
static int nfds(void) {
  int n = 0;
  for (int fd = 0; fd < 65536; ++fd) n += fcntl(fd, F_GETFD) != -1;
  return n;
}

static int dial(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static void send_all(int fd, const char *s, size_t n) {
  while (n) {
    ssize_t k = send(fd, s, n, MSG_NOSIGNAL);
    if (k <= 0) return;
    s += k, n -= (size_t)k;
  }
}

/* GET / on a fresh connection: 1 if answered "HTTP/1.1 200" within 5 s. */
static int page_served(void) {
  int fd = dial();
  if (fd < 0) return 0;
  char req[128], ans[16] = {0}, buf[65536];
  int n = snprintf(req, sizeof req, "GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port);
  send_all(fd, req, (size_t)n);
  size_t got = 0;
  for (double end = now() + 5; now() < end;) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    ssize_t k = recv(fd, buf, sizeof buf, 0);
    if (k <= 0) break;
    for (ssize_t i = 0; i < k && got < sizeof ans - 1; ++i) ans[got++] = buf[i];
  }
  close(fd);
  return strncmp(ans, "HTTP/1.1 200", 12) == 0;
}

static const char upgrade[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                              "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                              "Sec-WebSocket-Protocol: talus\r\n\r\n";

/* A connection of `kind` (0 silent, 1 partial request, 2 partial request and half-close, 3 WebSocket
 * upgrade, 4 WebSocket, a control message and a partial frame), left open; -1 if refused. */
static int abandoned(int kind) {
  int fd = dial();
  if (fd < 0) return -1;
  char req[600];
  int n = 0;
  if (kind == 1 || kind == 2) n = snprintf(req, sizeof req, "GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n", port);
  if (kind == 3 || kind == 4) n = snprintf(req, sizeof req, upgrade, port);
  if (kind == 4) {
    static const char msg[] = "{\"type\":\"pause\"}";
    const unsigned char mask[4] = {1, 2, 3, 4};
    req[n++] = (char)0x81;
    req[n++] = (char)(0x80 | (sizeof msg - 1));
    for (int i = 0; i < 4; ++i) req[n++] = (char)mask[i];
    for (size_t i = 0; i < sizeof msg - 1; ++i) req[n++] = (char)(msg[i] ^ mask[i % 4]);
    req[n++] = (char)0x81, req[n++] = (char)0xfe; /* a frame's first bytes only */
  }
  send_all(fd, req, (size_t)n);
  if (kind == 2) shutdown(fd, SHUT_WR);
  return fd;
}

/* Close, with a reset (SO_LINGER 0) when `reset`. */
static void drop(int fd, int reset) {
  if (reset) {
    struct linger l = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  }
  close(fd);
}

/* The server's sockets (descriptors beyond base and the `held` client sockets) once they stop
 * changing (at most `wait` s). */
static int server_sockets(int base, int held, double wait) {
  int last = -1;
  for (double end = now() + wait; now() < end; pause_s(0.2)) {
    int n = nfds() - base - held;
    if (n == last) return n;
    last = n;
  }
  return last;
}

/* The server's sockets after it has closed the connections (at most 5 s). */
static int server_sockets_back(int base) {
  int n = 0;
  for (double end = now() + 5; now() < end; pause_s(0.1))
    if ((n = nfds() - base) <= 0) break;
  return n;
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  struct rlimit nofile; /* 300 client sockets and the server's: at least 1024 descriptors */
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY && nofile.rlim_cur < 1024) {
    nofile.rlim_cur = nofile.rlim_max == RLIM_INFINITY || nofile.rlim_max >= 1024 ? 1024 : nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
    getrlimit(RLIMIT_NOFILE, &nofile);
    if (nofile.rlim_cur < 1024) {
      printf("SKIPPED: RLIMIT_NOFILE %llu: the test needs 1024 descriptors\n", (unsigned long long)nofile.rlim_cur);
      return TL_TEST_SKIP_CODE;
    }
  }
  tl_world *world = NULL;
  tl_recorder *rec = NULL;
  tl_viewer *viewer = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (tl_scene_load(TALUS_SOURCE_DIR "/robots/worlds/boxes_and_balls.xml", &world, NULL, &err)) {
    printf("world: %s\n", err.message);
    return 1;
  }
  tl_record_options o;
  tl_record_options_default(&o);
  o.keep_frames = 0;
  if (tl_recorder_create(world, &o, &rec, &err)) {
    printf("recorder: %s\n", err.message);
    return 1;
  }
  tl_status st = tl_viewer_create(rec, "127.0.0.1", 0, &viewer, &err);
  if (st == TL_ERR_UNSUPPORTED) {
    printf("SKIPPED: no live view in this build (%s)\n", err.message);
    return TL_TEST_SKIP_CODE;
  }
  TL_CHECK(st == TL_OK, "tl_viewer_create: %s", err.message);
  if (st) return tl_test_finish();
  port = tl_viewer_port(viewer);
  int slots = 128; /* the server's slots: 128, at most a quarter of RLIMIT_NOFILE (record_live.c) */
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY && nofile.rlim_cur / 4 < 128)
    slots = nofile.rlim_cur / 4 < 8 ? 8 : (int)(nofile.rlim_cur / 4);
  TL_CHECK(page_served(), "GET / served at the start");
  pause_s(0.2); /* the server has closed the page's connection */
  int base = nfds();
  printf("baseline: %d descriptors; the server's slots: %d\n", base, slots);

  /* 1. abandoned connections kept open */
  int held[KINDS * PER_KIND], nh = 0, refused = 0;
  for (int k = 0; k < KINDS; ++k)
    for (int i = 0; i < PER_KIND; ++i) {
      int fd = abandoned(k);
      if (fd >= 0)
        held[nh++] = fd;
      else
        refused++;
    }
  int srv = server_sockets(base, nh, 3);
  printf("%d abandoned connections held (%d refused by the kernel): the server holds %d sockets\n", nh, refused, srv);
  TL_CHECK(nh == KINDS * PER_KIND, "every connection accepted by the kernel (%d of %d)", nh, KINDS * PER_KIND);
  TL_CHECK(srv <= slots + 1, "the server holds at most its %d slots (+1 closing) for %d abandoned connections: %d",
           slots, nh, srv);
  TL_CHECK(page_served(), "GET / served while %d abandoned connections are held", nh);

  /* 2. the clients go away */
  for (int i = 0; i < nh; ++i) drop(held[i], i % 2);
  srv = server_sockets_back(base);
  printf("after the clients closed: the server holds %d sockets\n", srv);
  TL_CHECK(srv == 0, "the server's sockets back to the baseline after the clients closed (%d left)", srv);
  TL_CHECK(page_served(), "GET / served after the abandoned connections");

  /* 3. churn: opened and closed at once */
  int opened = 0;
  for (int i = 0; i < 2000; ++i) {
    int fd = abandoned(i % KINDS);
    if (fd >= 0) drop(fd, (i / KINDS) % 2), opened++;
  }
  srv = server_sockets_back(base);
  printf("after %d connections opened and closed: the server holds %d sockets\n", opened, srv);
  TL_CHECK(opened == 2000, "2000 connections accepted by the kernel (%d)", opened);
  TL_CHECK(srv == 0, "the server's sockets back to the baseline after the churn (%d left)", srv);
  TL_CHECK(page_served(), "GET / served after the churn");

  tl_viewer_free(viewer);

  /* 4. a process that may open few files (RLIMIT_NOFILE 256: 64 slots): 150 abandoned connections leave
     it descriptors for its own files (the simulation's recording) and the page is still served */
  struct rlimit low = nofile;
  if (low.rlim_cur == RLIM_INFINITY || low.rlim_cur > 256) low.rlim_cur = 256;
  TL_CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0, "RLIMIT_NOFILE lowered to 256");
  st = tl_viewer_create(rec, "127.0.0.1", 0, &viewer, &err);
  TL_CHECK(st == TL_OK, "tl_viewer_create with RLIMIT_NOFILE 256: %s", err.message);
  if (st) return tl_test_finish();
  port = tl_viewer_port(viewer);
  TL_CHECK(page_served(), "GET / served at the start (RLIMIT_NOFILE 256)");
  pause_s(0.2);
  base = nfds();
  nh = 0;
  for (int i = 0; i < 150; ++i) {
    int fd = abandoned(i % 2); /* silent, a partial request */
    if (fd >= 0) held[nh++] = fd;
  }
  srv = server_sockets(base, nh, 3);
  FILE *f = fopen("/dev/null", "w");
  printf("RLIMIT_NOFILE 256, %d abandoned connections held: the server holds %d sockets; fopen %s\n", nh, srv,
         f ? "works" : strerror(errno));
  TL_CHECK(f != NULL, "the process can still open a file while %d abandoned connections are held", nh);
  if (f) fclose(f);
  TL_CHECK(srv <= 64 + 1, "the server holds at most 64 slots (+1 closing) under RLIMIT_NOFILE 256: %d", srv);
  TL_CHECK(page_served(), "GET / served while %d abandoned connections are held (RLIMIT_NOFILE 256)", nh);
  for (int i = 0; i < nh; ++i) drop(held[i], i % 2);
  srv = server_sockets_back(base);
  TL_CHECK(srv == 0, "the server's sockets back to the baseline (RLIMIT_NOFILE 256; %d left)", srv);
  TL_CHECK(page_served(), "GET / served after the abandoned connections (RLIMIT_NOFILE 256)");
  tl_viewer_free(viewer);
  tl_recorder_free(rec);
  tl_world_free(world);
  return tl_test_finish();
}
