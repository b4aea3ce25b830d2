// loadgen: a native HTTP/1.1 load generator for Ringbook's load bench (bench/load.ts) that
// costs the machine little CPU per request, so the server under test keeps the cores.
//
// It writes PRE-BUILT request bytes (signed by Node before timing: bench/load/native_generator.ts
// writes the request file) over N keep-alive connections to a loopback address, one lane per
// connection (over WebSocket, K lanes per connection with --ws-lanes-per-connection K). A lane is a fixed set of wallets and the queue of their requests in nonce order;
// it has at most ONE request in flight (window 1): the server's uWS closes a connection that
// sends a second request while an asynchronous answer is pending (measured, see
// bench/load/lanes.ts), and window 1 also keeps each wallet's nonces arriving in order.
//
// Modes:
//   closed  max rate: each lane sends its next request as soon as the previous answer is complete;
//           latency = answer complete - write.
//   open    fixed rate: request i is scheduled at t0 + i / rate (CLOCK_MONOTONIC, timerfd; the timer
//           fires --spin-us early and the generator spins to the due time) on lane i mod N; a busy lane queues it; latency = answer complete - SCHEDULED time, so a
//           stalled server shows up as latency rather than as fewer samples (no coordinated
//           omission). service = answer - write, send_delay = write - scheduled.
// Responses are parsed just enough: status line, Content-Length, the "error" code of non-2xx
// bodies and whether a 200 order's "fills" list is empty. CPU from getrusage(RUSAGE_SELF).
// I/O: io_uring when the kernel gives it (--io; loadgen_uring.h, the ring, and loadgen_uring_run.h: one
// io_uring_enter per wake-up submits the due sends and reaps the answers of multishot recvs), else
// epoll, where per request it makes two syscalls, a send and a recv, plus its share of epoll_wait: the sockets
// are edge-triggered, one recv per readiness reads into a shared hot buffer, and a lane's next
// request is prefetched when it sends one (what each costs: docs/benchmarks.md, section h21g).
// Nearly all of the rest is the kernel's TCP path, the server socket's receive included, which
// loopback runs in the sender's context.
// Output: one JSON line on stdout. Errors: a message on stderr and exit status 2.
//
// Request file (little-endian): "RBLG0001", u32 lanes, u32 0, then per lane: u32 count and
// count records of { u8 kind (0 order, 1 cancel, 2 deposit, 3 other), u32 length, bytes }.
// Usage: usage() in loadgen_options.h and native-bench/README.md. This file holds the run's
// setup, window and drain (main); the program's other parts, by job:
//   loadgen_run.h       the lanes and the run's state (types every part below works on)
//   loadgen_send.h      a lane's next request, its send stamp and write; free, empty, closed lanes
//   loadgen_answers.h   complete answers: counted, timed, recorded; the lane's next request
//   loadgen_ws.h        --transport ws: the /ws upgrade and the answers' frames (loadgen_sha1.h: the accept key)
//   loadgen_ws_lanes.h  --ws-lanes-per-connection: K lanes on one WebSocket, their frames written together
//   loadgen_schedule.h  the one timer and the open mode's schedule
//   loadgen_epoll.h     the epoll backend; loadgen_uring_run.h (with loadgen_uring.h) the io_uring one
//   loadgen_report.h    the JSON line
//   loadgen_input.h (request file), loadgen_hist.h (histograms), loadgen_http.h (answer heads),
//   loadgen_records.h (--records), loadgen_options.h (command line), loadgen_common.h (limits),
//   loadgen_slice.h (--slice-us, the generator's own EEVDF slice).
#include <fcntl.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include "loadgen_run.h"
#include "loadgen_send.h"
#include "loadgen_answers.h"
#include "loadgen_ws.h"
#include "loadgen_schedule.h"
#include "loadgen_epoll.h"
#include "loadgen_uring_run.h"
#include "loadgen_ws_lanes.h"
#include "loadgen_report.h"
#include "loadgen_slice.h"

/** One socket per lane, or per K lanes with --ws-lanes-per-connection (its fd in each; loadgen_ws_lanes.h). */
static void connect_all(run_t *r, const struct sockaddr_storage *ss, socklen_t sl) {
  int per = r->o.ws_lanes_per_conn;
  for (int i = 0; i < r->nlanes; i += per) {
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
    for (int j = i; j < i + per && j < r->nlanes; j++) r->lanes[j].fd = fd;
    if (r->o.ws) ws_handshake(r, i, fd); // blocking, before the socket joins a backend
    if (r->use_uring) continue; // io_uring sockets stay blocking: the ring never blocks on them, it polls
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) die("fcntl: %s", strerror(errno));
    struct epoll_event ev = {.events = SOCKET_EVENTS, .data.u32 = (uint32_t)i};
    if (epoll_ctl(r->ep, EPOLL_CTL_ADD, fd, &ev) != 0) die("epoll_ctl: %s", strerror(errno));
  }
  if (!r->use_uring) return;
  int *fds = malloc((size_t)r->nlanes * sizeof *fds);
  if (fds == NULL) die("out of memory");
  for (int i = 0; i < r->nlanes; i++) fds[i] = r->lanes[i].fd;
  int e = uring_register_files(&r->u, fds, (uint32_t)r->nlanes);
  free(fds);
  if (e != 0) die("io_uring: registering %d sockets: %s", r->nlanes, strerror(-e));
  for (int i = 0; i < r->nlanes; i += per) uring_arm_recv(r, i); // a socket's reads: its first lane's
}

static int pending_work(const run_t *r) { return r->busy_count > 0 || (r->o.open && r->queued > 0); }
static void event_loop_once(run_t *r) {
  if (r->use_uring) uring_loop_once(r);
  else epoll_loop_once(r);
}

int main(int argc, char **argv) {
  run_t *r = calloc(1, sizeof *r);
  if (r == NULL) die("out of memory");
  parse_args(argc, argv, &r->o);
  // First: the slice covers the whole run (connects included); a refusal stops it before any send.
  double slice_before_us = r->o.slice_us > 0 ? set_own_slice_us(r->o.slice_us) : 0;
  struct sockaddr_storage ss;
  socklen_t sl;
  resolve_loopback(r->o.host, r->o.port, &ss, &sl);
  uint64_t nreqs = 0;
  req_queue_t *queues;
  if (r->o.file != NULL) queues = load_request_file(r->o.file, &r->nlanes, &nreqs);
  else {
    r->nlanes = r->o.connections;
    queues = repeat_get_queues(r->o.repeat_get, r->nlanes, r->o.max_requests, &nreqs);
  }
  // Lanes on cache-line boundaries (lane_t is one line); nlanes <= CONNECTIONS_MAX: <= 256 KiB.
  r->lanes = aligned_alloc(64, (size_t)r->nlanes * sizeof *r->lanes);
  r->cold = calloc((size_t)r->nlanes, sizeof *r->cold);
  r->stamp_lanes = malloc((size_t)r->nlanes * sizeof *r->stamp_lanes);
  if (r->lanes == NULL || r->cold == NULL || r->stamp_lanes == NULL) die("out of memory");
  memset(r->lanes, 0, (size_t)r->nlanes * sizeof *r->lanes);
  for (int i = 0; i < r->nlanes; i++) {
    r->lanes[i].rec = queues[i].first;
    r->lanes[i].left = queues[i].n;
    r->lanes[i].repeat = (uint8_t)queues[i].repeat;
    r->cold[i].n = queues[i].n;
  }
  free(queues);
  ws_lanes_init(r);
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
  choose_io(r);
  if (r->use_uring) {
    r->u.before_submit = stamp_sends;
    r->u.submit_ctx = r;
  }
  r->exhausted_end = (int)ceil(r->o.exhausted_share * r->nlanes);
  if (r->exhausted_end < 1) r->exhausted_end = 1;

  int64_t clock_offset_ns = realtime_minus_monotonic_ns();
  int64_t u0, s0, cpu_total_user, cpu_total_sys;
  int64_t cpu0 = rusage_us(&u0, &s0);
  int64_t vcsw0, ivcsw0, vcsw1, ivcsw1;
  context_switches(&vcsw0, &ivcsw0);
  connect_all(r, &ss, sl);

  r->t0 = now_ns();
  r->sending = 1;
  if (r->o.open) {
    double total = floor(r->o.rate * r->o.duration_ms / 1000.0);
    r->open_total = total > (double)r->o.max_requests ? r->o.max_requests : (uint64_t)total;
    r->t_end = INT64_MAX;
    r->timer_role = TIMER_SCHEDULE;
    double spin_ns = r->o.spin_us * 1000.0, spin_cap_ns = SPIN_INTERVAL_SHARE * 1e9 / r->o.rate;
    r->spin_ns = (int64_t)(spin_ns < spin_cap_ns ? spin_ns : spin_cap_ns);
    if (r->open_total == 0) { r->sending = 0; r->t_end = r->t0; }
    else arm_schedule(r, r->t0);
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
      lane_cold_t *c = &r->cold[i];
      for (uint64_t k = c->started; k < c->scheduled; k++) hist_record(&r->latency, now - sched_of(r, i, k));
      drop_queue(r, c);
    }
  }
  int64_t u1, s1;
  int64_t cpu_us = rusage_us(&u1, &s1) - cpu0;
  context_switches(&vcsw1, &ivcsw1);
  int64_t end_ns = now_ns();
  for (int i = 0; i < r->nlanes; i += r->o.ws_lanes_per_conn) if (r->lanes[i].fd >= 0) close(r->lanes[i].fd);
  rusage_us(&cpu_total_user, &cpu_total_sys);
  if (r->o.records != NULL) records_write(&r->records, r->o.records, clock_offset_ns);

  run_figures_t f = {
      .requests_in_file = nreqs, .slice_us_before = slice_before_us, .cpu_us = cpu_us, .cpu_user_us = u1 - u0, .cpu_sys_us = s1 - s0,
      .cpu_total_us = cpu_total_user + cpu_total_sys, .voluntary_context_switches = vcsw1 - vcsw0,
      .involuntary_context_switches = ivcsw1 - ivcsw0, .end_ns = end_ns, .clock_realtime_minus_monotonic_ns = clock_offset_ns};
  report_json(r, &f);
  return 0;
}
