// loadgen's one timer and the open mode's schedule: request i is due at t0 + i / rate; the timer
// (a timerfd with epoll, a ring timeout with io_uring) is armed for the next due request, the end
// of the window or the end of the drain. Part of loadgen.c, included after loadgen_answers.h.
//
// Early wake (--spin-us N, open mode): the timer is armed N µs before the next due send and the
// generator spins on the clock from its wake to the due time, then sends. Why: send_delay (the
// send stamp minus the scheduled time) is the tool's own lateness, charged to the server in
// `latency`; on this VM the timer's interrupt arrives ~22 µs after expiry and the send ~45 µs
// after (ftrace split: docs/benchmarks.md, h26g). Never early: the spin ends at the due time, and
// what is due is decided from a clock read taken at or after it. Bounded: a spin lasts at most N
// µs (the timer never fires before it was armed to), once per timer fire, and the loop handles
// answers between spins; at max rate (closed mode) no send waits for the clock and nothing spins.
#ifndef LOADGEN_SCHEDULE_H
#define LOADGEN_SCHEDULE_H
#include <math.h>
#include <sys/timerfd.h>
#include "loadgen_send.h"

static void arm_timer(run_t *r, int64_t at) {
  if (r->use_uring) { uring_arm_timeout(r, at); return; }
  struct itimerspec its = {0};
  its.it_value.tv_sec = at / 1000000000LL;
  its.it_value.tv_nsec = at % 1000000000LL;
  if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0) its.it_value.tv_nsec = 1;
  if (timerfd_settime(r->tfd, TFD_TIMER_ABSTIME, &its, NULL) != 0) die("timerfd_settime: %s", strerror(errno));
}

/** Lets the core (and a hyperthread sibling) know this is a spin-wait. */
static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield" ::: "memory");
#endif
}

/** Arms the schedule's timer for the send due at `due`: spin_ns before it (the early wake). */
static void arm_schedule(run_t *r, int64_t due) {
  int64_t now = now_ns();
  r->next_due_ns = due;
  r->timer_fire_ns = due - r->spin_ns;
  r->timer_ahead = r->timer_fire_ns > now;
  arm_timer(r, r->timer_fire_ns);
}

/**
 * Spins from `now` to `due` on the clock; returns the first reading at or after `due`. The caller
 * checked due - now <= spin_ns, so this lasts at most the early wake (longer only if the vCPU is
 * taken away meanwhile, which makes the send late, never early).
 */
static int64_t spin_to(run_t *r, int64_t now, int64_t due) {
  int64_t from = now;
  while (now < due) {
    cpu_relax();
    now = now_ns();
  }
  r->spins++;
  r->spin_ns_total += now - from;
  return now;
}

/** Open mode: hands every request due by now to its lane, then arms the timer for the next. */
static void on_schedule(run_t *r) {
  int64_t now = now_ns();
  // The timer's lateness: its armed time to this first reading (only if it was armed ahead of time).
  if (r->timer_ahead) hist_record(&r->timer_late, now - r->timer_fire_ns);
  r->timer_ahead = 0;
  if (now < r->next_due_ns) {
    // The early wake. A fire further ahead than the spin (not expected: timers do not fire early)
    // sleeps again rather than spin longer than asked.
    if (r->next_due_ns - now > r->spin_ns) { arm_schedule(r, r->next_due_ns); return; }
    now = spin_to(r, now, r->next_due_ns);
  }
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
  // One-shot at the exact next time (a periodic timer's rounded interval would drift), less the
  // early wake; if that is already past, the timer fires at once and the loop handles whatever
  // answers are in before the spin (a spin never runs twice without a wait between).
  arm_schedule(r, r->t0 + (int64_t)ceil((double)r->open_next * 1e9 / r->o.rate));
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

#endif
