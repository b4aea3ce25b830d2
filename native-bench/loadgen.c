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
// Usage: usage() in loadgen_options.h and native-bench/README.md. The program's other parts:
// loadgen_input.h (request file), loadgen_hist.h (histograms), loadgen_http.h (answer heads),
// loadgen_common.h (limits), loadgen_slice.h (--slice-us, the generator's own EEVDF slice).
#include <fcntl.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include "loadgen_common.h"
#include "loadgen_hist.h"
#include "loadgen_http.h"
#include "loadgen_input.h"
#include "loadgen_options.h"
#include "loadgen_records.h"
#include "loadgen_slice.h"
#include "loadgen_uring.h"

/**
 * The sockets are edge-triggered: level-triggered epoll puts every reported socket back on its
 * ready list, so the next epoll_wait polls each one again only to find it empty. EPOLLRDHUP: a
 * peer's close that arrives with the last bytes is still seen (on_readable reads on until recv says 0).
 */
#define SOCKET_EVENTS (EPOLLIN | EPOLLRDHUP | EPOLLET)

static const char *const KIND_NAMES[KINDS] = {"order", "cancel", "deposit", "other"};
enum { KIND_ORDER = 0, KIND_CANCEL = 1 };

/** Context switches so far: voluntary (slept: epoll_wait with nothing ready) and involuntary. */
static void context_switches(int64_t *voluntary, int64_t *involuntary) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  *voluntary = ru.ru_nvcsw;
  *involuntary = ru.ru_nivcsw;
}

static int64_t rusage_us(int64_t *user, int64_t *sys) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  *user = (int64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec;
  *sys = (int64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
  return *user + *sys;
}

// ---- lanes ----

/**
 * A lane's state touched per request, in ONE cache line of its own: a send and an answer touch
 * this line and nothing else of the lane (no false sharing with a neighbour's line, and the
 * 256-lane array is 16 KiB, inside L1). The rest (lane_cold_t) is for split answers, open mode
 * and the report.
 */
typedef struct __attribute__((aligned(64))) {
  const uint8_t *rec; // its next request's record in the mapped file, read in place (loadgen_input.h)
  const uint8_t *cur; // the in-flight request's bytes (in the map)
  int64_t sent_ns;    // taken right before the syscall that sends it (stamp_sends, flush)
  int64_t sched_ns;
  uint32_t cur_len;   // bytes of the in-flight request
  uint32_t woff;      // bytes of the in-flight request written so far
  uint32_t rlen;      // bytes of an unfinished answer in the lane's own buffer
  uint32_t left;      // requests not yet started
  int fd;
  uint8_t busy;       // a request is in flight (written or being written)
  uint8_t closed;
  uint8_t kind;       // kind of the request in flight
  uint8_t want_out;   // registered for EPOLLOUT (partial write)
  uint8_t repeat;     // --repeat-get: `rec` stays on its one record
} lane_t;
_Static_assert(sizeof(lane_t) == 64, "one cache line per lane");

/** A lane's state that a plain request does not touch. */
typedef struct {
  uint8_t *rbuf; // only answers split across reads live here
  uint32_t rcap;
  uint32_t n;    // requests it was given (sent = n - left)
  // open mode: requests scheduled on this lane so far and how many of them were started
  uint64_t scheduled, started;
} lane_cold_t;

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

// ---- the run ----

typedef struct {
  opts_t o;
  lane_t *lanes;
  lane_cold_t *cold;
  int nlanes;
  int64_t batch_ns; // the answers' stamp: one clock read per batch of completions (or epoll events)
  // io_uring: lanes whose send is queued and not yet stamped; stamp_sends stamps them right
  // before the io_uring_enter that submits them (at most one per lane: window 1)
  int *stamp_lanes;
  int nstamp;
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
  uint64_t reads;              // recv calls that returned bytes (one per answer unless answers split)
  uint64_t read_bytes;         // the bytes those recvs returned: what the server wrote, if none was lost
  uint64_t early_sends;        // open mode: writes before their scheduled time (a scheduler bug if not 0)
  int64_t first_send_ns, last_send_ns;
  hist_t latency, service, send_delay;
  // io: io_uring (loadgen_uring.h) when the kernel lets us, else epoll (ep, tfd above)
  int use_uring;
  const char *io_fallback; // why auto chose epoll (open mode, or the kernel refused a step), or NULL
  uring_t u;
  uint32_t timer_gen;                  // the armed timeout's generation: an older one that fires is stale
  struct __kernel_timespec timer_at;   // read by the kernel when the timeout sqe is submitted
  uint64_t uring_completions;
  uint64_t uring_rearms; // multishot recvs that ended (buffers ran out) and were armed again
  uint64_t uring_nobufs; // of those, the ends for want of a provided buffer (ENOBUFS)
  records_t records; // --records: one per answer
  uint8_t rshared[READ_SHARED_BYTES]; // every recv of a lane without a partial answer lands here (hot in cache)
} run_t;

enum { TIMER_SCHEDULE, TIMER_WINDOW_END, TIMER_DRAIN };

static int64_t sched_of(const run_t *r, int lane, uint64_t k) {
  // request index i = lane + k * N is scheduled at t0 + i / rate
  double i = (double)lane + (double)k * (double)r->nlanes;
  return r->t0 + (int64_t)(i * 1e9 / r->o.rate);
}

// The io_uring backend (loadgen_uring_run.h, included below where what it calls is defined).
static void uring_send(run_t *r, int li, const uint8_t *p, uint32_t len);
static void uring_arm_timeout(run_t *r, int64_t at);

static void set_out(run_t *r, int li, int want) {
  lane_t *l = &r->lanes[li];
  if (l->want_out == want) return;
  // EPOLL_CTL_MOD polls the socket again: data that arrived meanwhile raises an event (edge mode loses nothing).
  struct epoll_event ev = {.events = SOCKET_EVENTS | (want ? EPOLLOUT : 0), .data.u32 = (uint32_t)li};
  if (epoll_ctl(r->ep, EPOLL_CTL_MOD, l->fd, &ev) != 0) die("epoll_ctl: %s", strerror(errno));
  l->want_out = want;
}

static void lane_closed(run_t *r, int li, int had_error);

/**
 * Pulls the lane's NEXT request (sent one answer from now, ~ms later) into the cache as this one
 * is submitted: the request file is ~10-40 MB read once, so without this every send's copy into
 * the socket waits on memory. Its length is not read (that load would wait on the miss): a lane's
 * requests are alike, so the span of this one stands for it. 256 lanes x ~450 bytes stay in L2.
 */
static void prefetch_next(const lane_t *l) {
  if (l->repeat || l->left == 0) return;
  for (uint32_t off = 0; off < REC_HEAD_BYTES + l->cur_len; off += 64) __builtin_prefetch(l->rec + off, 0, 1);
}

/** Open mode's send delay, and the window's first and last send, at the send's stamp. */
static void note_send(run_t *r, const lane_t *l) {
  int64_t at = l->sent_ns;
  if (r->o.open) {
    hist_record(&r->send_delay, at - l->sched_ns);
    if (at < l->sched_ns) r->early_sends++;
  }
  if (r->first_send_ns == 0) r->first_send_ns = at;
  r->last_send_ns = at;
}

/**
 * io_uring: stamps every queued send with one clock read, taken right before the io_uring_enter
 * that submits them (uring_t.before_submit), so a send stamp is not the earlier answer's time.
 */
static void stamp_sends(void *ctx) {
  run_t *r = ctx;
  if (r->nstamp == 0) return;
  int64_t at = now_ns();
  for (int i = 0; i < r->nstamp; i++) {
    lane_t *l = &r->lanes[r->stamp_lanes[i]];
    l->sent_ns = at;
    note_send(r, l);
  }
  r->nstamp = 0;
}

/** Writes what is left of the in-flight request; partial writes wait for EPOLLOUT. */
static void flush(run_t *r, int li) {
  lane_t *l = &r->lanes[li];
  if (r->use_uring) {
    // The whole rest in one send; a short one comes back as its completion (uring_on_send).
    uring_send(r, li, l->cur + l->woff, l->cur_len - l->woff);
    l->woff = l->cur_len;
    return;
  }
  while (l->woff < l->cur_len) {
    // send, not write: no VFS layer, and MSG_NOSIGNAL turns a closed peer into EPIPE (a socket
    // error counted below) rather than a SIGPIPE that would end the run.
    ssize_t w = send(l->fd, l->cur + l->woff, l->cur_len - l->woff, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w > 0) { l->woff += (uint32_t)w; continue; }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) { set_out(r, li, 1); return; }
    lane_closed(r, li, 1);
    return;
  }
  if (l->want_out) set_out(r, li, 0);
}

/**
 * Starts the lane's next request (its bytes stay in the map); returns 0 when the lane has none
 * left. Its send stamp is taken right before the syscall that sends it: epoll's send here,
 * io_uring's next io_uring_enter (stamp_sends).
 */
static int send_next(run_t *r, int li, int64_t sched) {
  lane_t *l = &r->lanes[li];
  if (l->left == 0 || r->sent_total >= r->o.max_requests) return 0;
  const uint8_t *rec = l->rec;
  l->kind = rec[0];
  l->cur_len = rec_len(rec);
  l->cur = rec + REC_HEAD_BYTES;
  if (!l->repeat) l->rec = l->cur + l->cur_len;
  l->left--;
  l->busy = 1;
  r->busy_count++;
  l->sched_ns = sched;
  l->woff = 0;
  r->sent_total++;
  r->stats[l->kind].sent++;
  if (r->use_uring) {
    r->stamp_lanes[r->nstamp++] = li;
  } else {
    l->sent_ns = now_ns();
    note_send(r, l);
  }
  flush(r, li);
  prefetch_next(l);
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
static void drop_queue(run_t *r, lane_cold_t *c) {
  uint64_t q = c->scheduled - c->started;
  r->not_sent += q;
  r->queued -= q;
  c->started = c->scheduled;
}

/** The lane is free: what it does next depends on the mode. */
static void on_idle(run_t *r, int li, int64_t now) {
  lane_t *l = &r->lanes[li];
  if (l->closed) return;
  if (r->o.open) {
    lane_cold_t *c = &r->cold[li];
    if (c->started < c->scheduled) {
      int64_t sched = sched_of(r, li, c->started);
      c->started++;
      r->queued--;
      if (!send_next(r, li, sched)) {
        r->not_sent++;
        drop_queue(r, c);
      }
    }
    return;
  }
  if (!r->sending || now >= r->t_end) return;
  if (!send_next(r, li, now)) lane_empty(r, now);
}

static void lane_closed(run_t *r, int li, int had_error) {
  lane_t *l = &r->lanes[li];
  if (l->closed) return;
  l->closed = 1;
  r->connections_closed++;
  if (had_error) r->socket_errors++;
  if (r->use_uring) {
    // The lane's recv and send hold the socket: shutdown ends them (their completions find the
    // lane closed), then the fixed slot lets go of it.
    shutdown(l->fd, SHUT_RDWR);
    uring_unregister_file(&r->u, (uint32_t)li);
  } else {
    epoll_ctl(r->ep, EPOLL_CTL_DEL, l->fd, NULL);
  }
  close(l->fd);
  l->fd = -1;
  if (l->busy) {
    l->busy = 0;
    r->busy_count--;
    r->unanswered++;
  }
  if (r->o.open) drop_queue(r, &r->cold[li]);
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

static void on_response(run_t *r, int li, int status, const uint8_t *body, size_t blen, uint64_t request_no) {
  lane_t *l = &r->lanes[li];
  int64_t now = r->batch_ns; // read once for the batch of answers this one came in
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
  if (r->o.records != NULL) {
    records_add(&r->records, (answer_record_t){.sched_ns = r->o.open ? l->sched_ns : l->sent_ns, .sent_ns = l->sent_ns, .done_ns = now,
                                               .request_no = request_no, .lane = (uint32_t)li, .status = (uint16_t)status, .kind = l->kind});
  }
  if (now <= r->t_end) {
    r->in_window_responses++;
    if (status == 200 && l->kind == KIND_ORDER) r->in_window_orders_ok++;
    if (status == 200 && l->kind == KIND_CANCEL) r->in_window_cancels_ok++;
  }
  on_idle(r, li, now);
}

/** Grows the lane's own buffer (only answers split across reads live there) to hold `need` bytes. */
static void lane_reserve(lane_cold_t *c, uint64_t need) {
  if (need <= c->rcap) return;
  uint64_t nc = c->rcap ? c->rcap : READ_BUF_INITIAL;
  while (nc < need) nc *= 2;
  if (nc > UINT32_MAX) die("answer too large");
  uint8_t *nb = realloc(c->rbuf, (size_t)nc);
  if (nb == NULL) die("out of memory");
  c->rbuf = nb;
  c->rcap = (uint32_t)nc;
}

/**
 * Handles every complete answer in buf[0, n); returns the bytes they took. What is left is the
 * start of an answer; *need is its whole size when its head is in (else 0).
 */
static uint32_t take_answers(run_t *r, int li, const uint8_t *buf, uint32_t n, uint64_t *need) {
  lane_t *l = &r->lanes[li];
  uint32_t pos = 0;
  *need = 0;
  while (pos < n && !l->closed) {
    head_t h;
    int k = parse_head(buf + pos, n - pos, r->o.records != NULL, &h);
    if (k == HEAD_INCOMPLETE) break;
    if (k == HEAD_BAD) {
      r->protocol_errors++;
      lane_closed(r, li, 1);
      break;
    }
    if (h.head_bytes + h.body_bytes > n - pos) {
      *need = h.head_bytes + h.body_bytes;
      break;
    }
    on_response(r, li, h.status, buf + pos + h.head_bytes, (size_t)h.body_bytes, h.request_no);
    pos += h.head_bytes + (uint32_t)h.body_bytes;
  }
  return pos;
}

/**
 * The socket is readable (edge-triggered: this event stands for every byte that arrived before
 * it). One recv normally takes it all: into the run's shared buffer (hot in cache) when the lane
 * holds no partial answer, else after that partial answer in the lane's own buffer; whatever
 * answer is left incomplete moves to the lane's buffer. A recv that returns less than the room
 * it had drained the socket (bytes arriving later raise a new event), so no second recv just to
 * see EAGAIN; a full buffer reads again. `hangup`: the peer closed or the socket has an error,
 * so read until recv says so (0 or an error) even after a short read.
 */
static void on_readable(run_t *r, int li, int hangup) {
  lane_t *l = &r->lanes[li];
  lane_cold_t *c = &r->cold[li];
  for (int round = 0; round < READS_PER_EVENT_MAX; round++) {
    uint8_t *buf;
    uint32_t have, room;
    if (l->rlen == 0) {
      buf = r->rshared;
      have = 0;
      room = READ_SHARED_BYTES;
    } else {
      if (l->rlen == c->rcap) {
        if (c->rcap >= MESSAGE_BYTES_MAX) { r->protocol_errors++; lane_closed(r, li, 1); return; }
        lane_reserve(c, (uint64_t)c->rcap * 2);
      }
      buf = c->rbuf;
      have = l->rlen;
      room = c->rcap - l->rlen;
    }
    ssize_t n = recv(l->fd, buf + have, room, MSG_DONTWAIT);
    if (n == 0) { lane_closed(r, li, 0); return; }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      lane_closed(r, li, 1);
      return;
    }
    r->reads++;
    r->read_bytes += (uint64_t)n;
    uint32_t total = have + (uint32_t)n;
    uint64_t need;
    uint32_t pos = take_answers(r, li, buf, total, &need);
    if (l->closed) return;
    uint32_t left = total - pos;
    if (left > 0 && buf == r->rshared) {
      lane_reserve(c, need > left ? need : left);
      memcpy(c->rbuf, buf + pos, left);
    } else if (left > 0) {
      if (pos > 0) memmove(c->rbuf, c->rbuf + pos, left);
      lane_reserve(c, need); // room for the whole answer once its length is known
    }
    l->rlen = left;
    if ((uint32_t)n < room && !hangup) return;
  }
  // Still reading after READS_PER_EVENT_MAX recvs: let the other lanes have their turn. EPOLL_CTL_MOD
  // polls the socket again and, as it is still readable, queues a fresh event for it.
  struct epoll_event ev = {.events = SOCKET_EVENTS | (l->want_out ? EPOLLOUT : 0), .data.u32 = (uint32_t)li};
  if (epoll_ctl(r->ep, EPOLL_CTL_MOD, l->fd, &ev) != 0) die("epoll_ctl: %s", strerror(errno));
}

static void arm_timer(run_t *r, int64_t at) {
  if (r->use_uring) { uring_arm_timeout(r, at); return; }
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
    lane_cold_t *c = &r->cold[li];
    c->scheduled++;
    r->queued++;
    if (!l->busy && c->started + 1 == c->scheduled) on_idle(r, li, now);
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
static void on_timer_fired(run_t *r) {
  switch (r->timer_role) {
    case TIMER_SCHEDULE: on_schedule(r); break;
    case TIMER_WINDOW_END:
      if (r->o.until_empty) r->ended_early = 1; // the DURATION_MS_MAX cap, not the end of the requests
      r->sending = 0;
      break;
    default: r->drain_expired = 1; break;
  }
}

static void on_timer(run_t *r) {
  uint64_t expirations;
  if (read(r->tfd, &expirations, sizeof expirations) < 0 && errno != EAGAIN) die("timerfd read: %s", strerror(errno));
  on_timer_fired(r);
}

#include "loadgen_uring_run.h"

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
    l->fd = fd;
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
  for (int i = 0; i < r->nlanes; i++) uring_arm_recv(r, i);
}

static int pending_work(const run_t *r) { return r->busy_count > 0 || (r->o.open && r->queued > 0); }

static void event_loop_once(run_t *r) {
  if (r->use_uring) { uring_loop_once(r); return; }
  struct epoll_event evs[EVENTS_PER_WAIT];
  int n = epoll_wait(r->ep, evs, EVENTS_PER_WAIT, -1);
  if (n < 0) {
    if (errno == EINTR) return;
    die("epoll_wait: %s", strerror(errno));
  }
  r->waits++;
  r->wait_events += (uint64_t)n;
  r->batch_ns = now_ns(); // every answer of these events: read once, after the wait
  for (int i = 0; i < n; i++) {
    uint32_t id = evs[i].data.u32;
    if (id == UINT32_MAX) { on_timer(r); continue; }
    lane_t *l = &r->lanes[id];
    if (l->closed) continue;
    if (evs[i].events & EPOLLOUT) flush(r, (int)id);
    if (l->closed) continue;
    if (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) on_readable(r, (int)id, (evs[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0);
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
      lane_cold_t *c = &r->cold[i];
      for (uint64_t k = c->started; k < c->scheduled; k++) hist_record(&r->latency, now - sched_of(r, i, k));
      drop_queue(r, c);
    }
  }
  int64_t u1, s1;
  int64_t cpu_us = rusage_us(&u1, &s1) - cpu0;
  context_switches(&vcsw1, &ivcsw1);
  int64_t end_ns = now_ns();
  for (int i = 0; i < r->nlanes; i++) if (r->lanes[i].fd >= 0) close(r->lanes[i].fd);
  rusage_us(&cpu_total_user, &cpu_total_sys);
  if (r->o.records != NULL) records_write(&r->records, r->o.records, clock_offset_ns);

  // ---- one JSON line ----
  FILE *o = stdout;
  double window_ms = (double)(r->t_end - r->t0) / 1e6;
  uint64_t answered = r->responses - r->unexpected_responses;
  fprintf(o, "{\"tool\":\"loadgen\",\"mode\":\"%s\",\"connections\":%d,\"requests_in_file\":%llu", r->o.open ? "open" : "closed", r->nlanes, (unsigned long long)nreqs);
  if (r->o.open) fprintf(o, ",\"rate_per_s\":%.3f,\"scheduled\":%llu", r->o.rate, (unsigned long long)r->open_next);
  fprintf(o, ",\"tcp_congestion\":\"%s\",\"generator_io\":\"%s\"", r->o.tcp_congestion, r->use_uring ? "io_uring" : "epoll");
  if (r->io_fallback != NULL) fprintf(o, ",\"io_fallback\":\"%s\"", r->io_fallback);
  if (r->o.slice_us > 0) fprintf(o, ",\"slice_us\":%.0f,\"slice_us_before\":%.1f", r->o.slice_us, slice_before_us);
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
  fprintf(o, ",\"first_send_ms\":%.3f,\"last_send_ms\":%.3f,\"early_sends\":%llu", r->first_send_ns ? (double)(r->first_send_ns - r->t0) / 1e6 : 0.0,
          r->last_send_ns ? (double)(r->last_send_ns - r->t0) / 1e6 : 0.0, (unsigned long long)r->early_sends);
  // io_uring: "epoll_waits" counts its waiting io_uring_enter calls and "epoll_events" its completions
  // (sends and timeouts included), so wake-ups per request read the same from either backend.
  fprintf(o, ",\"epoll_waits\":%llu,\"epoll_events\":%llu,\"reads\":%llu,\"read_bytes\":%llu", (unsigned long long)r->waits, (unsigned long long)r->wait_events,
          (unsigned long long)r->reads, (unsigned long long)r->read_bytes);
  if (r->use_uring)
    fprintf(o, ",\"io_uring_enters\":%llu,\"io_uring_recv_buffers\":%u,\"io_uring_recv_rearms\":%llu,\"io_uring_recv_nobufs\":%llu", (unsigned long long)r->u.enters,
            r->u.nbufs, (unsigned long long)r->uring_rearms, (unsigned long long)r->uring_nobufs);
  fprintf(o, ",\"voluntary_context_switches\":%lld,\"involuntary_context_switches\":%lld", (long long)(vcsw1 - vcsw0), (long long)(ivcsw1 - ivcsw0));
  if (r->o.records != NULL) fprintf(o, ",\"records\":%llu,\"clock_realtime_minus_monotonic_ns\":%lld", (unsigned long long)r->records.n, (long long)clock_offset_ns);
  fprintf(o, ",\"generator_cpu_us_per_request\":%.3f", answered > 0 ? (double)cpu_us / (double)answered : 0.0);
  if (r->o.report_lanes) {
    fputs(",\"lane_sent\":[", o);
    for (int i = 0; i < r->nlanes; i++) fprintf(o, "%s%llu", i ? "," : "", (unsigned long long)(r->cold[i].n - r->lanes[i].left));
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
