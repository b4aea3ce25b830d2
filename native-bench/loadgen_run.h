// loadgen's run: the lanes (one cache line each), the run's state and counters, and the
// process figures (rusage). Part of loadgen.c, included first: the other loadgen_*.h parts of the
// program (send, answers, schedule, epoll, uring_run, report) work on these types.
#ifndef LOADGEN_RUN_H
#define LOADGEN_RUN_H
#include <sys/epoll.h>
#include <sys/resource.h>
#include "loadgen_common.h"
#include "loadgen_hist.h"
#include "loadgen_options.h"
#include "loadgen_records.h"
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
  int64_t spin_ns;       // --spin-us in ns (open mode; 0 in closed mode)
  int64_t next_due_ns;   // the next scheduled send's time (the timer fires spin_ns before it)
  int64_t timer_fire_ns; // when the schedule's timer was armed to fire
  int timer_ahead;       // it was armed for a time still ahead (its lateness is measured)
  uint64_t spins;        // early wakes that spun to their due time
  int64_t spin_ns_total; // the time those spins took
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
  hist_t timer_late; // open mode: the schedule timer's fire to the generator's first clock read after it
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
  // --transport ws (loadgen_ws.h): frames that were not answers (each also a protocol error), of
  // them answers with another request's id; pings answered, pongs and close frames received
  uint64_t ws_unexpected, ws_id_mismatches, ws_pings, ws_pongs, ws_closes;
  uint64_t ws_rng;  // the pong masks' generator state (seeded from getrandom on first use)
  uint32_t ws_said; // kinds of unexpected frame already said on stderr (one line each)
  // --ws-lanes-per-connection K > 1 (loadgen_ws_lanes.h): lane li is on socket li / K; a socket's
  // state (fd, read buffer, EPOLLOUT) lives in its first lane; frames wait in ws_conns until the
  // loop's next wait or enter, then go out in one write per socket
  struct ws_conn *ws_conns;
  int nconns;      // sockets: ceil(nlanes / K)
  int *ws_dirty;   // sockets with frames waiting
  int nws_dirty;
  uint64_t ws_writes; // writes (sendmsg) of waiting frames, and the frames they carried
  uint64_t ws_frames_written;
  uint8_t rshared[READ_SHARED_BYTES]; // every recv of a lane without a partial answer lands here (hot in cache)
} run_t;

enum { TIMER_SCHEDULE, TIMER_WINDOW_END, TIMER_DRAIN };

static int64_t sched_of(const run_t *r, int lane, uint64_t k) {
  // request index i = lane + k * N is scheduled at t0 + i / rate
  double i = (double)lane + (double)k * (double)r->nlanes;
  return r->t0 + (int64_t)(i * 1e9 / r->o.rate);
}

// Defined further on (the backends: loadgen_epoll.h, loadgen_uring_run.h; loadgen_send.h).
static void uring_send(run_t *r, int li, const uint8_t *p, uint32_t len);
static void uring_arm_timeout(run_t *r, int64_t at);
static void set_out(run_t *r, int li, int want);
static void lane_closed(run_t *r, int li, int had_error);
static uint32_t take_ws_answers(run_t *r, int li, const uint8_t *buf, uint32_t n, uint64_t *need);
static void ws_queue_send(run_t *r, int li);
static void ws_conn_closed(run_t *r, int li, int had_error);
static void ws_flush_all(run_t *r);
static void ws_conn_flush(run_t *r, int c);

#endif
