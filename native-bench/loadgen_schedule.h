// loadgen's one timer and the open mode's schedule: request i is due at t0 + i / rate; the timer
// (a timerfd with epoll, a ring timeout with io_uring) is armed for the next due request, the end
// of the window or the end of the drain. Part of loadgen.c, included after loadgen_answers.h.
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

#endif
