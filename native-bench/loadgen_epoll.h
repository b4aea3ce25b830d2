// loadgen's epoll backend (the fallback, and auto's choice in open mode): edge-triggered sockets,
// one recv per readiness into a shared buffer, the timerfd as one more event (native-bench/README.md,
// "Reading with epoll"). Part of loadgen.c, included after loadgen_schedule.h.
#ifndef LOADGEN_EPOLL_H
#define LOADGEN_EPOLL_H
#include "loadgen_answers.h"
#include "loadgen_schedule.h"

static void set_out(run_t *r, int li, int want) {
  lane_t *l = &r->lanes[li];
  if (l->want_out == want) return;
  // EPOLL_CTL_MOD polls the socket again: data that arrived meanwhile raises an event (edge mode loses nothing).
  struct epoll_event ev = {.events = SOCKET_EVENTS | (want ? EPOLLOUT : 0), .data.u32 = (uint32_t)li};
  if (epoll_ctl(r->ep, EPOLL_CTL_MOD, l->fd, &ev) != 0) die("epoll_ctl: %s", strerror(errno));
  l->want_out = want;
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

static void on_timer(run_t *r) {
  uint64_t expirations;
  if (read(r->tfd, &expirations, sizeof expirations) < 0 && errno != EAGAIN) die("timerfd read: %s", strerror(errno));
  on_timer_fired(r);
}

/**
 * One epoll_wait (no timeout: the one timer bounds it) and every event it returned: the timer,
 * a lane's room to write (a partial send) or its answers.
 */
static void epoll_loop_once(run_t *r) {
  struct epoll_event evs[EVENTS_PER_WAIT];
  if (r->nws_dirty > 0) ws_flush_all(r);
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
    if (evs[i].events & EPOLLOUT) {
      if (r->o.ws_lanes_per_conn > 1) ws_conn_flush(r, (int)id / r->o.ws_lanes_per_conn);
      else flush(r, (int)id);
    }
    if (l->closed) continue;
    if (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) on_readable(r, (int)id, (evs[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0);
  }
}

#endif
