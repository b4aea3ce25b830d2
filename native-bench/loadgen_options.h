// loadgen's command line and the loopback-only target check.
#ifndef LOADGEN_OPTIONS_H
#define LOADGEN_OPTIONS_H
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "loadgen_common.h"

// ---- options ----

typedef struct {
  const char *host;
  int port;
  const char *file;
  const char *repeat_get; // synthetic GET requests instead of a file
  int connections;        // only with repeat_get (a file says how many lanes it has)
  int open;
  double rate;
  double duration_ms;     // 0 with until_empty
  int until_empty;
  uint64_t max_requests;
  double exhausted_share;
  double drain_ms;
  int histograms;
  int report_lanes;
  const char *tcp_congestion; // congestion control of the generator's sockets, or "default"
  const char *records;        // per-request records file (--records), or NULL
  double slice_us;            // --slice-us: this thread's EEVDF slice request (loadgen_slice.h); 0: the kernel's default
  int io;                     // --io: IO_AUTO (io_uring, else epoll), IO_URING (or fail), IO_EPOLL
  uint32_t recv_buffers;      // --recv-buffers: provided receive buffers (io_uring); 0: 2 per lane, 64..8192
  double spin_us;             // --spin-us: open mode's early wake, µs before a due send (loadgen_schedule.h); 0: none
  int spin_given;
  int ws;                     // --transport ws: WebSocket order entry (loadgen_ws.h); 0: HTTP/1.1
  int ws_lanes_per_conn;      // --ws-lanes-per-connection K: lanes sharing one WebSocket (loadgen_ws_lanes.h); 1: one each
} opts_t;

/**
 * Most lanes on one WebSocket: the server's default limits.ws_posts_in_flight_max (64); more posts
 * in flight on a connection are answered 429 at once, which is not the load being measured.
 */
#define WS_LANES_PER_CONNECTION_MAX 64

enum { IO_AUTO = 0, IO_URING = 1, IO_EPOLL = 2 };

static void usage(void) {
  fputs(
      "usage: loadgen --target 127.0.0.1:PORT (--requests FILE | --repeat-get PATH --connections N)\n"
      "               [--mode closed|open] [--rate R] [--duration-ms D | --until-empty]\n"
      "               [--max-requests N] [--exhausted-share F] [--drain-ms D] [--histograms] [--report-lanes]\n"
      "               [--tcp-congestion reno|default|NAME] [--records FILE] [--slice-us N] [--io auto|io_uring|epoll]\n"
      "               [--recv-buffers N] [--spin-us N] [--transport http|ws] [--ws-lanes-per-connection K]\n"
      "  closed (default): max rate, one request in flight per connection; open: R requests/s scheduled\n"
      "  on CLOCK_MONOTONIC, latency from the scheduled time. Loopback targets only (127.0.0.0/8, ::1).\n"
      "  --until-empty (closed): send every request of the file, then stop (still capped by --max-requests).\n"
      "  --records FILE: one record per answer (scheduled/written/read times, the server's X-Request-Id number).\n"
      "  --slice-us N: ask the kernel for an EEVDF slice of N us (100..100000, Linux >= 6.12) for the generator;\n"
      "  the tool's own scheduling, reported as slice_us (the server's is its config).\n"
      "  --io: the socket I/O; auto (default) uses io_uring in closed mode when the kernel allows it,\n"
      "  else (and in open mode) epoll (reported as generator_io); io_uring fails rather than fall\n"
      "  back; epoll forces the fallback.\n"
      "  --recv-buffers N (with --io io_uring): the multishot recvs' provided 2 KiB buffers, a power of two\n"
      "  1..8192 (default: 2 per lane, at least 64); a few make the recvs run out and be armed again.\n"
      "  --spin-us N (open mode): wake N us before each due send and spin on the clock to it (0..1000,\n"
      "  default " SPIN_US_DEFAULT_TEXT "; 0: sleep to the due time; at most a quarter of 1 / rate): the timer's\n"
      "  wake-up lateness is not charged to send_delay.\n"
      "  --transport ws: upgrade each connection at GET /ws and send the file's records as they are\n"
      "  (pre-built masked `post` frames: bench/load/ws_frames.ts); answers are `response` messages.\n"
      "  --ws-lanes-per-connection K (with ws, 1..64, default 1): K lanes share one WebSocket (lanes / K\n"
      "  sockets), each lane still one post in flight, so a socket has up to K; frames due together go\n"
      "  out in one write, answers are routed to their lane by post id.\n"
      "  Prints one JSON line (see native-bench/README.md).\n",
      stderr);
}

static double num_arg(const char *name, const char *v, double lo, double hi) {
  char *end = NULL;
  errno = 0;
  double x = strtod(v, &end);
  if (errno != 0 || end == v || *end != '\0' || !(x >= lo && x <= hi)) die("%s must be a number in [%g, %g], got '%s'", name, lo, hi, v);
  return x;
}

static void parse_args(int argc, char **argv, opts_t *o) {
  memset(o, 0, sizeof *o);
  o->duration_ms = 10000;
  o->max_requests = REQUESTS_MAX;
  o->exhausted_share = 0.1;
  o->drain_ms = 5000;
  o->tcp_congestion = "reno";
  o->spin_us = SPIN_US_DEFAULT;
  o->ws_lanes_per_conn = 1;
  const char *target = NULL;
  int duration_given = 0;
  for (int i = 1; i < argc; i++) {
    const char *k = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE() do { if (v == NULL) die("%s needs a value", k); i++; } while (0)
    if (strcmp(k, "--target") == 0) { NEED_VALUE(); target = v; }
    else if (strcmp(k, "--requests") == 0) { NEED_VALUE(); o->file = v; }
    else if (strcmp(k, "--repeat-get") == 0) { NEED_VALUE(); o->repeat_get = v; }
    else if (strcmp(k, "--connections") == 0) { NEED_VALUE(); o->connections = (int)num_arg(k, v, 1, CONNECTIONS_MAX); }
    else if (strcmp(k, "--mode") == 0) {
      NEED_VALUE();
      if (strcmp(v, "open") == 0) o->open = 1;
      else if (strcmp(v, "closed") == 0) o->open = 0;
      else die("--mode must be closed or open, got '%s'", v);
    }
    else if (strcmp(k, "--rate") == 0) { NEED_VALUE(); o->rate = num_arg(k, v, 1e-3, RATE_MAX); }
    else if (strcmp(k, "--duration-ms") == 0) { NEED_VALUE(); o->duration_ms = num_arg(k, v, 1, DURATION_MS_MAX); duration_given = 1; }
    else if (strcmp(k, "--until-empty") == 0) o->until_empty = 1;
    else if (strcmp(k, "--max-requests") == 0) { NEED_VALUE(); o->max_requests = (uint64_t)num_arg(k, v, 1, (double)REQUESTS_MAX); }
    else if (strcmp(k, "--exhausted-share") == 0) { NEED_VALUE(); o->exhausted_share = num_arg(k, v, 0, 1); }
    else if (strcmp(k, "--drain-ms") == 0) { NEED_VALUE(); o->drain_ms = num_arg(k, v, 0, DRAIN_MS_MAX); }
    else if (strcmp(k, "--histograms") == 0) o->histograms = 1;
    else if (strcmp(k, "--tcp-congestion") == 0) {
      NEED_VALUE();
      if (strlen(v) == 0 || strlen(v) >= 16 || strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(v)) die("--tcp-congestion must be a congestion control name (e.g. reno) or default");
      o->tcp_congestion = v;
    }
    else if (strcmp(k, "--report-lanes") == 0) o->report_lanes = 1;
    else if (strcmp(k, "--records") == 0) { NEED_VALUE(); o->records = v; }
    else if (strcmp(k, "--slice-us") == 0) { NEED_VALUE(); o->slice_us = num_arg(k, v, 100, 100000); if (o->slice_us != floor(o->slice_us)) die("--slice-us must be a whole number of us, got '%s'", v); }
    else if (strcmp(k, "--io") == 0) {
      NEED_VALUE();
      if (strcmp(v, "auto") == 0) o->io = IO_AUTO;
      else if (strcmp(v, "io_uring") == 0) o->io = IO_URING;
      else if (strcmp(v, "epoll") == 0) o->io = IO_EPOLL;
      else die("--io must be auto, io_uring or epoll, got '%s'", v);
    }
    else if (strcmp(k, "--recv-buffers") == 0) {
      NEED_VALUE();
      double n = num_arg(k, v, 1, URING_BUFS_MAX);
      // The kernel takes a provided-buffer ring of a power of two entries only.
      if (n != floor(n) || ((uint32_t)n & ((uint32_t)n - 1)) != 0) die("--recv-buffers must be a power of two (1, 2, 4, ... %u), got '%s'", URING_BUFS_MAX, v);
      o->recv_buffers = (uint32_t)n;
    }
    else if (strcmp(k, "--spin-us") == 0) {
      NEED_VALUE();
      o->spin_us = num_arg(k, v, 0, SPIN_US_MAX);
      if (o->spin_us != floor(o->spin_us)) die("--spin-us must be a whole number of us, got '%s'", v);
      o->spin_given = 1;
    }
    else if (strcmp(k, "--transport") == 0) {
      NEED_VALUE();
      if (strcmp(v, "ws") == 0) o->ws = 1;
      else if (strcmp(v, "http") == 0) o->ws = 0;
      else die("--transport must be http or ws, got '%s'", v);
    }
    else if (strcmp(k, "--ws-lanes-per-connection") == 0) {
      NEED_VALUE();
      o->ws_lanes_per_conn = (int)num_arg(k, v, 1, WS_LANES_PER_CONNECTION_MAX);
      if ((double)o->ws_lanes_per_conn != strtod(v, NULL)) die("--ws-lanes-per-connection must be a whole number, got '%s'", v);
    }
    else if (strcmp(k, "--help") == 0 || strcmp(k, "-h") == 0) { usage(); exit(0); }
    else { usage(); die("unknown option %s", k); }
#undef NEED_VALUE
  }
  if (target == NULL) { usage(); die("--target is required"); }
  // HOST:PORT, or [V6]:PORT
  static char host[64];
  const char *colon = strrchr(target, ':');
  if (colon == NULL) die("--target must be HOST:PORT, got '%s'", target);
  size_t hl = (size_t)(colon - target);
  if (hl >= 2 && target[0] == '[' && target[hl - 1] == ']') { target++; hl -= 2; }
  if (hl == 0 || hl >= sizeof host) die("--target host is empty or too long");
  memcpy(host, target, hl);
  host[hl] = '\0';
  o->host = host;
  o->port = (int)num_arg("--target port", colon + 1, 1, 65535);
  if ((o->file == NULL) == (o->repeat_get == NULL)) die("give exactly one of --requests FILE and --repeat-get PATH");
  if (o->repeat_get != NULL) {
    if (o->connections == 0) die("--repeat-get needs --connections N");
    if (o->repeat_get[0] != '/' || strpbrk(o->repeat_get, " \r\n") != NULL) die("--repeat-get PATH must start with / and hold no spaces or line breaks");
  } else if (o->connections != 0) {
    die("--connections goes with --repeat-get only (a request file says how many lanes it has)");
  }
  if (o->ws_lanes_per_conn > 1 && !o->ws) die("--ws-lanes-per-connection goes with --transport ws only (HTTP/1.1 has one request in flight per connection)");
  if (o->ws && o->repeat_get != NULL) die("--transport ws sends a request file's frames: --repeat-get is HTTP only");
  if (o->open && o->rate <= 0) die("--mode open needs --rate R");
  if (!o->open && o->rate > 0) die("--rate goes with --mode open only");
  if (o->until_empty && (o->open || duration_given)) die("--until-empty is for closed mode, without --duration-ms");
  if (o->until_empty) o->duration_ms = 0;
  // Closed mode sends when an answer comes, never on the clock: nothing to wake early for.
  if (o->spin_given && !o->open) die("--spin-us goes with --mode open only");
  // With auto a fallback to epoll would drop it unseen: a run that asks for few buffers gets them or fails.
  if (o->recv_buffers != 0 && o->io != IO_URING) die("--recv-buffers goes with --io io_uring only");
}

/** Loopback only: this tool floods its target and must never point at another machine. */
static void resolve_loopback(const char *host, int port, struct sockaddr_storage *ss, socklen_t *sl) {
  memset(ss, 0, sizeof *ss);
  struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
  struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
  if (strcmp(host, "localhost") == 0) host = "127.0.0.1";
  if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
    if ((ntohl(a4->sin_addr.s_addr) >> 24) != 127) die("refusing non-loopback target %s (only 127.0.0.0/8 and ::1)", host);
    a4->sin_family = AF_INET;
    a4->sin_port = htons((uint16_t)port);
    *sl = sizeof *a4;
    return;
  }
  if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
    if (!IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr)) die("refusing non-loopback target %s (only 127.0.0.0/8 and ::1)", host);
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons((uint16_t)port);
    *sl = sizeof *a6;
    return;
  }
  die("target host must be a numeric loopback address (127.x.x.x, ::1 or localhost), got '%s'", host);
}

#endif
