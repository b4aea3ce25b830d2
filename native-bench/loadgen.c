// loadgen: a native HTTP/1.1 load generator for Ringbook's load bench (bench/load.ts) that
// costs the machine little CPU per request, so the server under test keeps the cores.
//
// It writes PRE-BUILT request bytes (signed by Node before timing: bench/load/native_generator.ts
// writes the request file) over N keep-alive connections to a loopback address, one lane per
// connection. A lane is a fixed set of wallets and the queue of their requests in nonce order;
// it has at most ONE request in flight (window 1): the server's uWS closes a connection that
// sends a second request while an asynchronous answer is pending (measured, see
// bench/load/lanes.ts), and window 1 also keeps each wallet's nonces arriving in order.
//
// Modes:
//   closed  max rate: each lane sends its next request as soon as the previous answer is complete;
//           latency = answer complete - write.
//   open    fixed rate: request i is scheduled at t0 + i / rate (CLOCK_MONOTONIC, timerfd) on
//           lane i mod N; a busy lane queues it; latency = answer complete - SCHEDULED time, so a
//           stalled server shows up as latency rather than as fewer samples (no coordinated
//           omission). service = answer - write, send_delay = write - scheduled.
// Responses are parsed just enough: status line, Content-Length, the "error" code of non-2xx
// bodies and whether a 200 order's "fills" list is empty. CPU from getrusage(RUSAGE_SELF).
// Output: one JSON line on stdout. Errors: a message on stderr and exit status 2.
//
// Request file (little-endian): "RBLG0001", u32 lanes, u32 0, then per lane: u32 count and
// count records of { u8 kind (0 order, 1 cancel, 2 deposit, 3 other), u32 length, bytes }.
// Usage: see usage() below and native-bench/README.md.
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

// ---- limits (every loop and buffer is bounded) ----
/** Longest timed window: 10 minutes (the load bench uses 10 s phases). */
#define DURATION_MS_MAX 600000.0
/** Longest wait for outstanding answers after the window. */
#define DRAIN_MS_MAX 60000.0
/** Most requests one run may send (50 M x ~450 bytes would already be a 22 GB file). */
#define REQUESTS_MAX 50000000ULL
/** Most connections (each is one fd; the bench uses 256). */
#define CONNECTIONS_MAX 4096
/** Highest fixed rate, requests per second. */
#define RATE_MAX 1000000.0
/** Largest request file: 8 GiB. */
#define FILE_BYTES_MAX (8ULL << 30)
/** Largest single request or response: 16 MiB (the server refuses bodies over 16 KiB). */
#define MESSAGE_BYTES_MAX (16u << 20)
/** First size of a connection's read buffer; answers are ~200-600 bytes. */
#define READ_BUF_INITIAL 16384u
#define KINDS 4
#define ERROR_CODES_MAX 32
#define ERROR_CODE_LEN_MAX 40
#define EVENTS_PER_WAIT 512

static const char *const KIND_NAMES[KINDS] = {"order", "cancel", "deposit", "other"};
enum { KIND_ORDER = 0, KIND_CANCEL = 1 };

static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("loadgen: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(2);
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t rusage_us(int64_t *user, int64_t *sys) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  *user = (int64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec;
  *sys = (int64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
  return *user + *sys;
}

// ---- latency histogram: HDR-like log buckets, 128 sub-buckets per power of two (< 0.8% error) ----
#define SUB_BITS 7
#define SUB (1u << SUB_BITS)
/** Values are clamped to 2^40 us (12 days). */
#define HIST_GROUPS 35
#define HIST_BUCKETS (HIST_GROUPS * SUB)

typedef struct {
  uint64_t counts[HIST_BUCKETS];
  uint64_t total;
  uint64_t max;
} hist_t;

static unsigned hist_index(uint64_t v) {
  if (v < SUB) return (unsigned)v;
  if (v >= (1ULL << 40)) v = (1ULL << 40) - 1;
  unsigned e = 63u - (unsigned)__builtin_clzll(v); // v in [2^e, 2^(e+1)), e >= SUB_BITS
  uint64_t m = v >> (e - SUB_BITS);                 // top 8 bits: [128, 256)
  return (e - SUB_BITS + 1) * SUB + (unsigned)(m - SUB);
}

/** Highest value that falls into bucket `i` (what percentiles report, like HDR's highest equivalent value). */
static uint64_t hist_upper(unsigned i) {
  if (i < SUB) return i;
  unsigned g = i / SUB;
  uint64_t m = (i % SUB) + SUB;
  return ((m + 1) << (g - 1)) - 1;
}

static void hist_record(hist_t *h, int64_t v_ns) {
  uint64_t v = v_ns <= 0 ? 0 : (uint64_t)((v_ns + 500) / 1000);
  h->counts[hist_index(v)]++;
  h->total++;
  if (v > h->max) h->max = v;
}

static uint64_t hist_percentile(const hist_t *h, double p) {
  if (h->total == 0) return 0;
  uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->total);
  if (rank < 1) rank = 1;
  uint64_t seen = 0;
  for (unsigned i = 0; i < HIST_BUCKETS; i++) {
    seen += h->counts[i];
    if (seen >= rank) {
      uint64_t u = hist_upper(i);
      return u < h->max ? u : h->max;
    }
  }
  return h->max;
}

static void hist_json(FILE *o, const char *name, const hist_t *h) {
  fprintf(o, "\"%s\":{\"count\":%llu,\"p50\":%llu,\"p90\":%llu,\"p99\":%llu,\"p999\":%llu,\"max\":%llu}", name,
          (unsigned long long)h->total, (unsigned long long)hist_percentile(h, 50), (unsigned long long)hist_percentile(h, 90),
          (unsigned long long)hist_percentile(h, 99), (unsigned long long)hist_percentile(h, 99.9), (unsigned long long)h->max);
}

/** Non-empty buckets as [upper value us, count] pairs, for a caller that rebuilds the histogram. */
static void hist_buckets_json(FILE *o, const char *name, const hist_t *h) {
  fprintf(o, "\"%s\":[", name);
  int first = 1;
  for (unsigned i = 0; i < HIST_BUCKETS; i++) {
    if (h->counts[i] == 0) continue;
    uint64_t u = hist_upper(i);
    fprintf(o, "%s[%llu,%llu]", first ? "" : ",", (unsigned long long)(u < h->max ? u : h->max), (unsigned long long)h->counts[i]);
    first = 0;
  }
  fputc(']', o);
}

// ---- requests and lanes ----

typedef struct {
  const uint8_t *p;
  uint32_t len;
  uint8_t kind;
} req_t;

typedef struct {
  req_t *reqs;
  uint32_t n;
  uint32_t next;   // next request to send
  int repeat;      // --repeat-get: reqs[0] stands for every request
  int fd;
  int closed;
  int busy;        // a request is in flight (written or being written)
  uint8_t kind;    // kind of the request in flight
  uint32_t woff;   // bytes of the in-flight request written so far
  int want_out;    // registered for EPOLLOUT (partial write)
  int64_t sent_ns, sched_ns;
  // open mode: requests scheduled on this lane so far and how many of them were started
  uint64_t scheduled, started;
  uint8_t *rbuf;
  uint32_t rcap, rlen;
  uint64_t sent_count;
} lane_t;

typedef struct {
  char code[ERROR_CODE_LEN_MAX + 1];
  uint64_t n;
} reject_t;

typedef struct {
  uint64_t sent, ok, with_fills;
  reject_t rejects[ERROR_CODES_MAX];
  int nrejects;
  uint64_t rejects_other; // distinct codes beyond ERROR_CODES_MAX
} kind_stats_t;

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
} opts_t;

static void usage(void) {
  fputs(
      "usage: loadgen --target 127.0.0.1:PORT (--requests FILE | --repeat-get PATH --connections N)\n"
      "               [--mode closed|open] [--rate R] [--duration-ms D | --until-empty]\n"
      "               [--max-requests N] [--exhausted-share F] [--drain-ms D] [--histograms] [--report-lanes]\n"
      "               [--tcp-congestion reno|default|NAME]\n"
      "  closed (default): max rate, one request in flight per connection; open: R requests/s scheduled\n"
      "  on CLOCK_MONOTONIC, latency from the scheduled time. Loopback targets only (127.0.0.0/8, ::1).\n"
      "  --until-empty (closed): send every request of the file, then stop (still capped by --max-requests).\n"
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
  if (o->open && o->rate <= 0) die("--mode open needs --rate R");
  if (!o->open && o->rate > 0) die("--rate goes with --mode open only");
  if (o->until_empty && (o->open || duration_given)) die("--until-empty is for closed mode, without --duration-ms");
  if (o->until_empty) o->duration_ms = 0;
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

// ---- request file ----

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static lane_t *load_file(const char *path, int *nlanes, uint64_t *nreqs) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) die("cannot open %s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) die("cannot stat %s: %s", path, strerror(errno));
  uint64_t size = (uint64_t)st.st_size;
  if (size < 16) die("%s: too short for a request file (%llu bytes)", path, (unsigned long long)size);
  if (size > FILE_BYTES_MAX) die("%s: larger than %llu bytes", path, (unsigned long long)FILE_BYTES_MAX);
  const uint8_t *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  if (m == MAP_FAILED) die("cannot map %s: %s", path, strerror(errno));
  close(fd);
  if (memcmp(m, "RBLG0001", 8) != 0) die("%s: not a loadgen request file (magic RBLG0001 missing)", path);
  uint32_t n = rd32(m + 8);
  if (n < 1 || n > CONNECTIONS_MAX) die("%s: lane count %u not in [1, %d]", path, n, CONNECTIONS_MAX);
  lane_t *lanes = calloc(n, sizeof *lanes);
  if (lanes == NULL) die("out of memory");
  uint64_t at = 16, total = 0;
  for (uint32_t l = 0; l < n; l++) {
    if (at + 4 > size) die("%s: truncated at lane %u", path, l);
    uint32_t c = rd32(m + at);
    at += 4;
    if (total + c > REQUESTS_MAX) die("%s: more than %llu requests", path, (unsigned long long)REQUESTS_MAX);
    // Each record is at least 5 bytes: a count larger than the rest of the file is corrupt.
    if ((uint64_t)c * 5 > size - at) die("%s: lane %u claims %u requests, more than the file holds", path, l, c);
    lanes[l].reqs = c ? malloc((size_t)c * sizeof(req_t)) : NULL;
    if (c && lanes[l].reqs == NULL) die("out of memory");
    lanes[l].n = c;
    for (uint32_t i = 0; i < c; i++) {
      if (at + 5 > size) die("%s: truncated in lane %u request %u", path, l, i);
      uint8_t kind = m[at];
      uint32_t len = rd32(m + at + 1);
      at += 5;
      if (kind >= KINDS) die("%s: lane %u request %u has kind %u (0..%d)", path, l, i, kind, KINDS - 1);
      if (len == 0 || len > MESSAGE_BYTES_MAX || len > size - at) die("%s: lane %u request %u has a bad length %u", path, l, i, len);
      lanes[l].reqs[i] = (req_t){m + at, len, kind};
      at += len;
    }
    total += c;
  }
  if (at != size) die("%s: %llu trailing bytes after the last lane", path, (unsigned long long)(size - at));
  *nlanes = (int)n;
  *nreqs = total;
  return lanes;
}

/** --repeat-get: every lane repeats one GET (one request record per lane, sent again and again). */
static lane_t *synthetic_lanes(const char *path, int n, uint64_t max_requests, uint64_t *nreqs) {
  static char text[512];
  int tl = snprintf(text, sizeof text, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path);
  if (tl <= 0 || (size_t)tl >= sizeof text) die("--repeat-get PATH too long");
  lane_t *lanes = calloc((size_t)n, sizeof *lanes);
  if (lanes == NULL) die("out of memory");
  uint64_t per = (max_requests + (uint64_t)n - 1) / (uint64_t)n;
  if (per > UINT32_MAX) per = UINT32_MAX;
  for (int l = 0; l < n; l++) {
    lanes[l].reqs = malloc(sizeof(req_t));
    if (lanes[l].reqs == NULL) die("out of memory");
    lanes[l].reqs[0] = (req_t){(const uint8_t *)text, (uint32_t)tl, 3};
    lanes[l].repeat = 1;
    lanes[l].n = (uint32_t)per;
  }
  *nreqs = per * (uint64_t)n;
  return lanes;
}

// ---- the run ----

typedef struct {
  opts_t o;
  lane_t *lanes;
  int nlanes;
  int ep;
  int tfd;        // the one timer: request schedule (open), end of window (closed), end of drain
  int timer_role; // TIMER_*
  int drain_expired;
  int64_t t0, t_end; // t_end: end of the measured window (INT64_MAX while open-ended)
  int sending;
  int ended_early;
  int busy_count;
  int exhausted, exhausted_end;
  uint64_t sent_total;
  // open mode
  uint64_t open_total, open_next;
  uint64_t queued; // scheduled but not started, over all lanes
  kind_stats_t stats[KINDS];
  uint64_t status_2xx, status_4xx, status_5xx, status_other;
  uint64_t responses, unexpected_responses;
  uint64_t in_window_responses, in_window_orders_ok, in_window_cancels_ok;
  uint64_t unanswered, not_sent, socket_errors, connections_closed, protocol_errors;
  uint64_t waits, wait_events; // epoll_wait calls and the events they returned (wakeups per request)
  hist_t latency, service, send_delay;
} run_t;

enum { TIMER_SCHEDULE, TIMER_WINDOW_END, TIMER_DRAIN };

static int64_t sched_of(const run_t *r, int lane, uint64_t k) {
  // request index i = lane + k * N is scheduled at t0 + i / rate
  double i = (double)lane + (double)k * (double)r->nlanes;
  return r->t0 + (int64_t)(i * 1e9 / r->o.rate);
}

static void set_out(run_t *r, int li, int want) {
  lane_t *l = &r->lanes[li];
  if (l->want_out == want) return;
  struct epoll_event ev = {.events = EPOLLIN | (want ? EPOLLOUT : 0), .data.u32 = (uint32_t)li};
  if (epoll_ctl(r->ep, EPOLL_CTL_MOD, l->fd, &ev) != 0) die("epoll_ctl: %s", strerror(errno));
  l->want_out = want;
}

static void lane_closed(run_t *r, int li, int had_error);

/** Writes what is left of the in-flight request; partial writes wait for EPOLLOUT. */
static void flush(run_t *r, int li) {
  lane_t *l = &r->lanes[li];
  const req_t *q = &l->reqs[l->repeat ? 0 : l->next - 1];
  while (l->woff < q->len) {
    ssize_t w = write(l->fd, q->p + l->woff, q->len - l->woff);
    if (w > 0) { l->woff += (uint32_t)w; continue; }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) { set_out(r, li, 1); return; }
    lane_closed(r, li, 1);
    return;
  }
  if (l->want_out) set_out(r, li, 0);
}

/** Starts the lane's next request; returns 0 when the lane has none left. */
static int send_next(run_t *r, int li, int64_t sched, int64_t now) {
  lane_t *l = &r->lanes[li];
  if (l->next >= l->n || r->sent_total >= r->o.max_requests) return 0;
  const req_t *q = &l->reqs[l->repeat ? 0 : l->next];
  l->next++;
  l->busy = 1;
  r->busy_count++;
  l->kind = q->kind;
  l->sent_ns = now;
  l->sched_ns = sched;
  l->woff = 0;
  l->sent_count++;
  r->sent_total++;
  r->stats[q->kind].sent++;
  if (r->o.open) hist_record(&r->send_delay, now - sched);
  flush(r, li);
  return 1;
}

static void lane_empty(run_t *r, int64_t now) {
  r->exhausted++;
  if (!r->o.open && !r->o.until_empty && r->sending && r->exhausted >= r->exhausted_end) {
    // The pre-signed pool is running out: end the window here so concurrency does not fade.
    r->ended_early = 1;
    r->t_end = now;
    r->sending = 0;
  }
}

/** Open mode: drops the lane's queued requests (lane gone or out of requests). */
static void drop_queue(run_t *r, lane_t *l) {
  uint64_t q = l->scheduled - l->started;
  r->not_sent += q;
  r->queued -= q;
  l->started = l->scheduled;
}

/** The lane is free: what it does next depends on the mode. */
static void on_idle(run_t *r, int li, int64_t now) {
  lane_t *l = &r->lanes[li];
  if (l->closed) return;
  if (r->o.open) {
    if (l->started < l->scheduled) {
      int64_t sched = sched_of(r, li, l->started);
      l->started++;
      r->queued--;
      if (!send_next(r, li, sched, now)) {
        r->not_sent++;
        drop_queue(r, l);
      }
    }
    return;
  }
  if (!r->sending || now >= r->t_end) return;
  if (!send_next(r, li, now, now)) lane_empty(r, now);
}

static void lane_closed(run_t *r, int li, int had_error) {
  lane_t *l = &r->lanes[li];
  if (l->closed) return;
  l->closed = 1;
  r->connections_closed++;
  if (had_error) r->socket_errors++;
  epoll_ctl(r->ep, EPOLL_CTL_DEL, l->fd, NULL);
  close(l->fd);
  l->fd = -1;
  if (l->busy) {
    l->busy = 0;
    r->busy_count--;
    r->unanswered++;
  }
  if (r->o.open) drop_queue(r, l);
}

static void count_reject(kind_stats_t *st, const char *code, size_t len) {
  for (int i = 0; i < st->nrejects; i++) {
    if (strlen(st->rejects[i].code) == len && memcmp(st->rejects[i].code, code, len) == 0) { st->rejects[i].n++; return; }
  }
  if (st->nrejects == ERROR_CODES_MAX) { st->rejects_other++; return; }
  memcpy(st->rejects[st->nrejects].code, code, len);
  st->rejects[st->nrejects].code[len] = '\0';
  st->rejects[st->nrejects].n = 1;
  st->nrejects++;
}

/** The error code of a refused request: "error":"CODE" in the body, else HTTP_<status>. */
static void reject_code(kind_stats_t *st, int status, const uint8_t *body, size_t blen) {
  if (status == 429) { count_reject(st, "RATE_LIMITED", 12); return; }
  static const char key[] = "\"error\":\"";
  const uint8_t *k = memmem(body, blen, key, sizeof key - 1);
  if (k != NULL) {
    const uint8_t *from = k + sizeof key - 1, *end = body + blen;
    size_t n = 0;
    while (from + n < end && n <= ERROR_CODE_LEN_MAX && ((from[n] >= 'A' && from[n] <= 'Z') || (from[n] >= '0' && from[n] <= '9') || from[n] == '_')) n++;
    if (n > 0 && n <= ERROR_CODE_LEN_MAX && from + n < end && from[n] == '"') { count_reject(st, (const char *)from, n); return; }
  }
  char code[16];
  int n = snprintf(code, sizeof code, "HTTP_%d", status);
  count_reject(st, code, (size_t)n);
}

static void on_response(run_t *r, int li, int status, const uint8_t *body, size_t blen) {
  lane_t *l = &r->lanes[li];
  int64_t now = now_ns();
  r->responses++;
  if (!l->busy) { r->unexpected_responses++; return; }
  l->busy = 0;
  r->busy_count--;
  kind_stats_t *st = &r->stats[l->kind];
  if (status >= 200 && status < 300) r->status_2xx++;
  else if (status >= 400 && status < 500) r->status_4xx++;
  else if (status >= 500 && status < 600) r->status_5xx++;
  else r->status_other++;
  if (status == 200) {
    st->ok++;
    if (l->kind == KIND_ORDER && memmem(body, blen, "\"fills\":[]", 10) == NULL) st->with_fills++;
  } else {
    reject_code(st, status, body, blen);
  }
  hist_record(&r->latency, now - (r->o.open ? l->sched_ns : l->sent_ns));
  if (r->o.open) hist_record(&r->service, now - l->sent_ns);
  if (now <= r->t_end) {
    r->in_window_responses++;
    if (status == 200 && l->kind == KIND_ORDER) r->in_window_orders_ok++;
    if (status == 200 && l->kind == KIND_CANCEL) r->in_window_cancels_ok++;
  }
  on_idle(r, li, now);
}

/** Case-insensitive search for a header name at a line start within [p, end); returns the value start. */
static const uint8_t *find_header(const uint8_t *p, const uint8_t *end, const char *name, size_t nl) {
  for (const uint8_t *s = p; s + nl < end; s++) {
    if (s[0] != '\n') continue;
    if (strncasecmp((const char *)s + 1, name, nl) == 0) {
      const uint8_t *v = s + 1 + nl;
      while (v < end && (*v == ' ' || *v == '\t')) v++;
      return v;
    }
  }
  return NULL;
}

/** Reads what the socket has and handles every complete response in the buffer. */
static void on_readable(run_t *r, int li) {
  lane_t *l = &r->lanes[li];
  if (l->rlen == l->rcap) {
    if (l->rcap >= MESSAGE_BYTES_MAX) { r->protocol_errors++; lane_closed(r, li, 1); return; }
    uint32_t nc = l->rcap ? l->rcap * 2 : READ_BUF_INITIAL;
    uint8_t *nb = realloc(l->rbuf, nc);
    if (nb == NULL) die("out of memory");
    l->rbuf = nb;
    l->rcap = nc;
  }
  ssize_t n = read(l->fd, l->rbuf + l->rlen, l->rcap - l->rlen);
  if (n == 0) { lane_closed(r, li, 0); return; }
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
    lane_closed(r, li, 1);
    return;
  }
  l->rlen += (uint32_t)n;
  uint32_t pos = 0;
  while (pos < l->rlen && !l->closed) {
    const uint8_t *b = l->rbuf + pos;
    uint32_t avail = l->rlen - pos;
    const uint8_t *he = memmem(b, avail, "\r\n\r\n", 4);
    if (he == NULL) break;
    if (avail < 12 || memcmp(b, "HTTP/1.", 7) != 0 || b[8] != ' ' || b[9] < '0' || b[9] > '9' || b[10] < '0' || b[10] > '9' || b[11] < '0' || b[11] > '9') {
      r->protocol_errors++;
      lane_closed(r, li, 1);
      return;
    }
    int status = (b[9] - '0') * 100 + (b[10] - '0') * 10 + (b[11] - '0');
    uint64_t len = 0;
    const uint8_t *cl = find_header(b, he + 2, "Content-Length:", 15);
    if (cl != NULL) {
      int digits = 0;
      while (cl < he && *cl >= '0' && *cl <= '9' && digits < 10) { len = len * 10 + (uint64_t)(*cl - '0'); cl++; digits++; }
      if (digits == 0 || len > MESSAGE_BYTES_MAX) { r->protocol_errors++; lane_closed(r, li, 1); return; }
    } else if (find_header(b, he + 2, "Transfer-Encoding:", 18) != NULL) {
      // uWS always answers with Content-Length; chunked answers are not needed here.
      r->protocol_errors++;
      lane_closed(r, li, 1);
      return;
    }
    uint64_t head = (uint64_t)(he + 4 - b);
    if (head + len > avail) {
      if (head + len > l->rcap) { // make room for the whole message
        uint32_t nc = l->rcap;
        while (nc < head + len) nc *= 2;
        uint8_t *nb = realloc(l->rbuf, nc);
        if (nb == NULL) die("out of memory");
        l->rbuf = nb;
        l->rcap = nc;
      }
      break;
    }
    on_response(r, li, status, b + head, (size_t)len);
    pos += (uint32_t)(head + len);
  }
  if (l->closed) return;
  if (pos > 0) {
    memmove(l->rbuf, l->rbuf + pos, l->rlen - pos);
    l->rlen -= pos;
  }
}

static void arm_timer(run_t *r, int64_t at) {
  struct itimerspec its = {0};
  its.it_value.tv_sec = at / 1000000000LL;
  its.it_value.tv_nsec = at % 1000000000LL;
  if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0) its.it_value.tv_nsec = 1;
  if (timerfd_settime(r->tfd, TFD_TIMER_ABSTIME, &its, NULL) != 0) die("timerfd_settime: %s", strerror(errno));
}

/** Open mode: hands every request due by now to its lane, then arms the timer for the next. */
static void on_schedule(run_t *r) {
  int64_t now = now_ns();
  uint64_t due = (uint64_t)floor((double)(now - r->t0) * r->o.rate / 1e9) + 1;
  if (due > r->open_total) due = r->open_total;
  for (; r->open_next < due; r->open_next++) {
    int li = (int)(r->open_next % (uint64_t)r->nlanes);
    lane_t *l = &r->lanes[li];
    if (l->closed) { r->not_sent++; continue; }
    l->scheduled++;
    r->queued++;
    if (!l->busy && l->started + 1 == l->scheduled) on_idle(r, li, now);
  }
  if (r->open_next >= r->open_total) {
    r->sending = 0;
    r->t_end = now;
    return;
  }
  // One-shot at the exact next time (a periodic timer's rounded interval would drift).
  arm_timer(r, r->t0 + (int64_t)ceil((double)r->open_next * 1e9 / r->o.rate));
}

/**
 * The timer fired. Every deadline (next scheduled request, end of window, end of drain) lives on
 * this one timerfd, so epoll_wait waits with -1 and arms no kernel timer of its own per wait.
 */
static void on_timer(run_t *r) {
  uint64_t expirations;
  if (read(r->tfd, &expirations, sizeof expirations) < 0 && errno != EAGAIN) die("timerfd read: %s", strerror(errno));
  switch (r->timer_role) {
    case TIMER_SCHEDULE: on_schedule(r); break;
    case TIMER_WINDOW_END:
      if (r->o.until_empty) r->ended_early = 1; // the DURATION_MS_MAX cap, not the end of the requests
      r->sending = 0;
      break;
    default: r->drain_expired = 1; break;
  }
}

static void connect_all(run_t *r, const struct sockaddr_storage *ss, socklen_t sl) {
  for (int i = 0; i < r->nlanes; i++) {
    lane_t *l = &r->lanes[i];
    // Blocking connects, one at a time: the server's accept loop never sees a full backlog.
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket: %s", strerror(errno));
    if (connect(fd, (const struct sockaddr *)ss, sl) != 0) die("connect to port %d (connection %d): %s", ntohs(((const struct sockaddr_in *)ss)->sin_port), i, strerror(errno));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    // Loopback has no congestion to control; BBR (this machine's default) models every ACK and
    // paces, which cost ~1 us of the generator's CPU per request here (10.2-10.8 us with reno vs
    // 11.4-12.8 us with bbr, three alternating pairs of 3 s runs against the server).
    const char *cc = r->o.tcp_congestion;
    if (strcmp(cc, "default") != 0 && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, (socklen_t)strlen(cc)) != 0) {
      if (i == 0) fprintf(stderr, "loadgen: TCP_CONGESTION %s refused (%s): keeping the system default\n", cc, strerror(errno));
      r->o.tcp_congestion = "default";
    }
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) die("fcntl: %s", strerror(errno));
    l->fd = fd;
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
    if (epoll_ctl(r->ep, EPOLL_CTL_ADD, fd, &ev) != 0) die("epoll_ctl: %s", strerror(errno));
  }
}

static int pending_work(const run_t *r) { return r->busy_count > 0 || (r->o.open && r->queued > 0); }

static void event_loop_once(run_t *r) {
  struct epoll_event evs[EVENTS_PER_WAIT];
  int n = epoll_wait(r->ep, evs, EVENTS_PER_WAIT, -1);
  if (n < 0) {
    if (errno == EINTR) return;
    die("epoll_wait: %s", strerror(errno));
  }
  r->waits++;
  r->wait_events += (uint64_t)n;
  for (int i = 0; i < n; i++) {
    uint32_t id = evs[i].data.u32;
    if (id == UINT32_MAX) { on_timer(r); continue; }
    lane_t *l = &r->lanes[id];
    if (l->closed) continue;
    if (evs[i].events & EPOLLOUT) flush(r, (int)id);
    if (l->closed) continue;
    if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) on_readable(r, (int)id);
  }
}

static void json_string(FILE *o, const char *s) {
  fputc('"', o);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', o);
    if ((unsigned char)*s < 0x20) continue;
    fputc(*s, o);
  }
  fputc('"', o);
}

int main(int argc, char **argv) {
  run_t *r = calloc(1, sizeof *r);
  if (r == NULL) die("out of memory");
  parse_args(argc, argv, &r->o);
  struct sockaddr_storage ss;
  socklen_t sl;
  resolve_loopback(r->o.host, r->o.port, &ss, &sl);
  uint64_t nreqs = 0;
  if (r->o.file != NULL) r->lanes = load_file(r->o.file, &r->nlanes, &nreqs);
  else {
    r->nlanes = r->o.connections;
    r->lanes = synthetic_lanes(r->o.repeat_get, r->nlanes, r->o.max_requests, &nreqs);
  }
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)r->nlanes + 16) {
    rl.rlim_cur = rl.rlim_max < (rlim_t)r->nlanes + 16 ? rl.rlim_max : (rlim_t)r->nlanes + 16;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  r->ep = epoll_create1(EPOLL_CLOEXEC);
  if (r->ep < 0) die("epoll_create1: %s", strerror(errno));
  r->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (r->tfd < 0) die("timerfd_create: %s", strerror(errno));
  struct epoll_event tev = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
  if (epoll_ctl(r->ep, EPOLL_CTL_ADD, r->tfd, &tev) != 0) die("epoll_ctl: %s", strerror(errno));
  r->exhausted_end = (int)ceil(r->o.exhausted_share * r->nlanes);
  if (r->exhausted_end < 1) r->exhausted_end = 1;

  int64_t u0, s0, cpu_total_user, cpu_total_sys;
  int64_t cpu0 = rusage_us(&u0, &s0);
  connect_all(r, &ss, sl);

  r->t0 = now_ns();
  r->sending = 1;
  if (r->o.open) {
    double total = floor(r->o.rate * r->o.duration_ms / 1000.0);
    r->open_total = total > (double)r->o.max_requests ? r->o.max_requests : (uint64_t)total;
    r->t_end = INT64_MAX;
    r->timer_role = TIMER_SCHEDULE;
    if (r->open_total == 0) { r->sending = 0; r->t_end = r->t0; }
    else arm_timer(r, r->t0);
  } else {
    // Closed: the window ends at t_end; until-empty: when nothing is left, capped at DURATION_MS_MAX.
    r->t_end = r->o.until_empty ? INT64_MAX : r->t0 + (int64_t)(r->o.duration_ms * 1e6);
    r->timer_role = TIMER_WINDOW_END;
    arm_timer(r, r->o.until_empty ? r->t0 + (int64_t)(DURATION_MS_MAX * 1e6) : r->t_end);
    for (int i = 0; i < r->nlanes; i++) on_idle(r, i, r->t0);
  }

  // The window: every wait ends by an event or the armed timer, so this loop is bounded in time.
  for (;;) {
    if (r->o.until_empty && r->sending && r->busy_count == 0) { r->t_end = now_ns(); r->sending = 0; }
    if (!r->sending) break;
    event_loop_once(r);
  }
  int64_t now = now_ns();
  if (r->t_end > now) r->t_end = now;
  // Drain: wait for every outstanding answer (and, open mode, every queued request).
  if (pending_work(r) && r->o.drain_ms > 0) {
    r->timer_role = TIMER_DRAIN;
    arm_timer(r, now + (int64_t)(r->o.drain_ms * 1e6));
    while (pending_work(r) && !r->drain_expired) event_loop_once(r);
  }
  // Whatever is still outstanding is lost; in open mode it is recorded as (now - scheduled).
  now = now_ns();
  for (int i = 0; i < r->nlanes; i++) {
    lane_t *l = &r->lanes[i];
    if (l->busy) {
      r->unanswered++;
      if (r->o.open) hist_record(&r->latency, now - l->sched_ns);
      l->busy = 0;
    }
    if (r->o.open) {
      for (uint64_t k = l->started; k < l->scheduled; k++) hist_record(&r->latency, now - sched_of(r, i, k));
      drop_queue(r, l);
    }
  }
  int64_t u1, s1;
  int64_t cpu_us = rusage_us(&u1, &s1) - cpu0;
  int64_t end_ns = now_ns();
  for (int i = 0; i < r->nlanes; i++) if (r->lanes[i].fd >= 0) close(r->lanes[i].fd);
  rusage_us(&cpu_total_user, &cpu_total_sys);

  // ---- one JSON line ----
  FILE *o = stdout;
  double window_ms = (double)(r->t_end - r->t0) / 1e6;
  uint64_t answered = r->responses - r->unexpected_responses;
  fprintf(o, "{\"tool\":\"loadgen\",\"mode\":\"%s\",\"connections\":%d,\"requests_in_file\":%llu", r->o.open ? "open" : "closed", r->nlanes, (unsigned long long)nreqs);
  if (r->o.open) fprintf(o, ",\"rate_per_s\":%.3f,\"scheduled\":%llu", r->o.rate, (unsigned long long)r->open_next);
  fprintf(o, ",\"tcp_congestion\":\"%s\"", r->o.tcp_congestion);
  fprintf(o, ",\"window_ms\":%.3f,\"run_ms\":%.3f,\"ended_early\":%s", window_ms, (double)(end_ns - r->t0) / 1e6, r->ended_early ? "true" : "false");
  fprintf(o, ",\"requests_sent\":%llu,\"responses\":%llu,\"unanswered\":%llu,\"not_sent\":%llu", (unsigned long long)r->sent_total, (unsigned long long)answered,
          (unsigned long long)r->unanswered, (unsigned long long)r->not_sent);
  fprintf(o, ",\"status_2xx\":%llu,\"status_4xx\":%llu,\"status_5xx\":%llu,\"status_other\":%llu", (unsigned long long)r->status_2xx, (unsigned long long)r->status_4xx,
          (unsigned long long)r->status_5xx, (unsigned long long)r->status_other);
  fprintf(o, ",\"socket_errors\":%llu,\"connections_closed\":%llu,\"protocol_errors\":%llu,\"unexpected_responses\":%llu", (unsigned long long)r->socket_errors,
          (unsigned long long)r->connections_closed, (unsigned long long)r->protocol_errors, (unsigned long long)r->unexpected_responses);
  fprintf(o, ",\"in_window\":{\"responses\":%llu,\"orders_ok\":%llu,\"cancels_ok\":%llu}", (unsigned long long)r->in_window_responses,
          (unsigned long long)r->in_window_orders_ok, (unsigned long long)r->in_window_cancels_ok);
  fputs(",\"kinds\":{", o);
  for (int k = 0; k < KINDS; k++) {
    const kind_stats_t *st = &r->stats[k];
    fprintf(o, "%s\"%s\":{\"sent\":%llu,\"ok\":%llu,\"with_fills\":%llu,\"rejects\":{", k ? "," : "", KIND_NAMES[k], (unsigned long long)st->sent,
            (unsigned long long)st->ok, (unsigned long long)st->with_fills);
    for (int i = 0; i < st->nrejects; i++) {
      if (i) fputc(',', o);
      json_string(o, st->rejects[i].code);
      fprintf(o, ":%llu", (unsigned long long)st->rejects[i].n);
    }
    if (st->rejects_other) fprintf(o, "%s\"OTHER_CODES\":%llu", st->nrejects ? "," : "", (unsigned long long)st->rejects_other);
    fputs("}}", o);
  }
  static const char *const hist_names[3] = {"latency", "service", "send_delay"};
  const hist_t *hists[3] = {&r->latency, &r->service, &r->send_delay};
  fputs("},\"latency_us\":{", o);
  for (int i = 0; i < 3; i++) {
    if (i) fputc(',', o);
    hist_json(o, hist_names[i], hists[i]);
  }
  fputc('}', o);
  fprintf(o, ",\"cpu_us\":%lld,\"cpu_user_us\":%lld,\"cpu_sys_us\":%lld,\"cpu_total_us\":%lld", (long long)cpu_us, (long long)(u1 - u0), (long long)(s1 - s0),
          (long long)(cpu_total_user + cpu_total_sys));
  fprintf(o, ",\"epoll_waits\":%llu,\"epoll_events\":%llu", (unsigned long long)r->waits, (unsigned long long)r->wait_events);
  fprintf(o, ",\"generator_cpu_us_per_request\":%.3f", answered > 0 ? (double)cpu_us / (double)answered : 0.0);
  if (r->o.report_lanes) {
    fputs(",\"lane_sent\":[", o);
    for (int i = 0; i < r->nlanes; i++) fprintf(o, "%s%llu", i ? "," : "", (unsigned long long)r->lanes[i].sent_count);
    fputc(']', o);
  }
  if (r->o.histograms) {
    fputs(",\"histograms\":{", o);
    for (int i = 0; i < 3; i++) {
      if (i) fputc(',', o);
      hist_buckets_json(o, hist_names[i], hists[i]);
    }
    fputc('}', o);
  }
  fputs("}\n", o);
  fflush(o);
  return 0;
}
