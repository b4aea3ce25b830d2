// loadgen --transport ws --ws-lanes-per-connection K: K lanes share one WebSocket. Part of
// loadgen.c, included after loadgen_uring_run.h.
//
// Why: over HTTP/1.1 uWS allows one request in flight per connection, so each answer is one send
// by the server and one recv by the generator. A WebSocket may carry several posts in flight
// (the server allows limits.ws_posts_in_flight_max), so with K lanes on a socket the server can
// read several posts with one recv and write several answers with one send (docs/benchmarks.md,
// h31x), which is the lever measured here.
//
// Decisions:
// - A lane is still a set of wallets with ONE post in flight, so each wallet's posts keep their
//   order; lanes c*K .. c*K+K-1 share socket c, whose fd, read buffer and EPOLLOUT flag live in
//   its first lane (the epoll event's and the ring's recv's lane), so the reading code is the
//   window-1 code unchanged. An answer goes to the lane its post id names (loadgen_ws.h), which
//   must be one of the socket's lanes.
// - Frames are not written when due but queued on their socket and written before the loop's
//   next wait (epoll_wait or io_uring_enter), every socket's queued frames in ONE write: a
//   sendmsg over the frames in the mapped file (no copy). The frames of a socket go out whole
//   and in queue order (a partial write with epoll keeps the rest queued for EPOLLOUT), so the
//   stream never interleaves two frames. Stamps: epoll reads the clock once per write, right
//   before it; io_uring stamps at the enter that submits (stamp_sends), as for one lane.
// - io_uring: one IORING_OP_SENDMSG per socket and wake-up, MSG_WAITALL as the single sends. The
//   kernel copies the msghdr and iovecs when the enter that submits it runs, so the socket's
//   arrays are reused at its next write (which follows one of its answers, so a later enter).
//   A short sendmsg (not expected with MSG_WAITALL) closes the socket as an error. Two writes of
//   one socket never overlap in practice: a socket has at most K frames outstanding (<= 64 x a
//   few hundred bytes, far below a loopback socket's buffer), so a write never has to wait.
// - A socket that closes closes its K lanes (each busy one counted unanswered).
#ifndef LOADGEN_WS_LANES_H
#define LOADGEN_WS_LANES_H
#include <sys/socket.h>
#include <sys/uio.h>
#include "loadgen_send.h"

struct ws_conn {
  int pending[WS_LANES_PER_CONNECTION_MAX]; // lanes whose frame waits (or is partly written), in order
  int npending;
  int dirty; // listed in run_t.ws_dirty
  struct iovec iov[WS_LANES_PER_CONNECTION_MAX];
  struct msghdr msg;
};

static int ws_first_lane(const run_t *r, int li) { return li - li % r->o.ws_lanes_per_conn; }

/** Sets up the sockets' queues (nlanes known). */
static void ws_lanes_init(run_t *r) {
  int k = r->o.ws_lanes_per_conn;
  r->nconns = (r->nlanes + k - 1) / k;
  if (k == 1) return;
  r->ws_conns = calloc((size_t)r->nconns, sizeof *r->ws_conns);
  r->ws_dirty = malloc((size_t)r->nconns * sizeof *r->ws_dirty);
  if (r->ws_conns == NULL || r->ws_dirty == NULL) die("out of memory");
}

/** Lane li's frame (send_next set it up) waits for its socket's next write. */
static void ws_queue_send(run_t *r, int li) {
  int c = li / r->o.ws_lanes_per_conn;
  struct ws_conn *w = &r->ws_conns[c];
  // At most K: a lane is queued only when it starts a post, and it has one in flight at a time.
  w->pending[w->npending++] = li;
  if (!w->dirty) {
    w->dirty = 1;
    r->ws_dirty[r->nws_dirty++] = c;
  }
}

/** io_uring: one SENDMSG of socket c's queued frames (submitted and stamped by the next enter). */
static void ws_conn_submit(run_t *r, int c) {
  struct ws_conn *w = &r->ws_conns[c];
  int first = c * r->o.ws_lanes_per_conn;
  uint32_t total = 0;
  for (int i = 0; i < w->npending; i++) {
    int li = w->pending[i];
    lane_t *l = &r->lanes[li];
    w->iov[i] = (struct iovec){.iov_base = (void *)(l->cur + l->woff), .iov_len = l->cur_len - l->woff};
    total += l->cur_len - l->woff;
    l->woff = l->cur_len;
    r->stamp_lanes[r->nstamp++] = li;
  }
  w->msg = (struct msghdr){.msg_iov = w->iov, .msg_iovlen = (size_t)w->npending};
  struct io_uring_sqe *s = uring_sqe(&r->u);
  s->opcode = IORING_OP_SENDMSG;
  s->fd = first; // the socket's fixed-file slot
  s->flags = IOSQE_FIXED_FILE | IOSQE_CQE_SKIP_SUCCESS;
  s->addr = (uint64_t)(uintptr_t)&w->msg;
  s->len = 1;
  s->msg_flags = MSG_NOSIGNAL | MSG_WAITALL;
  s->user_data = user_data(OP_SEND, (uint64_t)first, total);
  r->ws_writes++;
  r->ws_frames_written += (uint64_t)w->npending;
  w->npending = 0;
}

/** epoll: writes socket c's queued frames with one sendmsg; what the socket does not take waits for EPOLLOUT. */
static void ws_conn_flush(run_t *r, int c) {
  struct ws_conn *w = &r->ws_conns[c];
  int first = c * r->o.ws_lanes_per_conn;
  lane_t *p = &r->lanes[first];
  if (p->closed) { w->npending = 0; return; }
  if (w->npending == 0) return;
  if (r->use_uring) { ws_conn_submit(r, c); return; }
  int64_t at = now_ns();
  for (int i = 0; i < w->npending; i++) {
    lane_t *l = &r->lanes[w->pending[i]];
    if (l->woff > 0) continue; // the head of a partial write: stamped at its first attempt
    l->sent_ns = at;
    note_send(r, l);
  }
  while (w->npending > 0) { // bounded: each pass writes >= 1 byte of the queue, or returns
    int n = w->npending;
    for (int i = 0; i < n; i++) {
      lane_t *l = &r->lanes[w->pending[i]];
      w->iov[i] = (struct iovec){.iov_base = (void *)(l->cur + l->woff), .iov_len = l->cur_len - l->woff};
    }
    w->msg = (struct msghdr){.msg_iov = w->iov, .msg_iovlen = (size_t)n};
    ssize_t got = sendmsg(p->fd, &w->msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) { set_out(r, first, 1); return; }
    if (got <= 0) { lane_closed(r, first, 1); return; }
    r->ws_writes++;
    size_t left = (size_t)got;
    int done = 0;
    while (done < n) {
      lane_t *l = &r->lanes[w->pending[done]];
      uint32_t rest = l->cur_len - l->woff;
      if (left < rest) { l->woff += (uint32_t)left; break; }
      l->woff = l->cur_len;
      left -= rest;
      done++;
    }
    r->ws_frames_written += (uint64_t)done;
    memmove(w->pending, w->pending + done, (size_t)(n - done) * sizeof w->pending[0]);
    w->npending -= done;
  }
  if (p->want_out) set_out(r, first, 0);
}

/** Before the loop waits: every socket with queued frames writes them (one write each). */
static void ws_flush_all(run_t *r) {
  int n = r->nws_dirty;
  r->nws_dirty = 0;
  for (int i = 0; i < n; i++) {
    int c = r->ws_dirty[i];
    r->ws_conns[c].dirty = 0;
    ws_conn_flush(r, c);
  }
}

/** A frame of the socket is half-written (a pong now would cut it). */
static int ws_conn_mid_frame(const run_t *r, int li) {
  const struct ws_conn *w = &r->ws_conns[li / r->o.ws_lanes_per_conn];
  return w->npending > 0 && r->lanes[w->pending[0]].woff > 0 && !r->use_uring;
}

/** The socket of lane li is gone: all its lanes close, each busy one's post unanswered. */
static void ws_conn_closed(run_t *r, int li, int had_error) {
  int first = ws_first_lane(r, li), end = first + r->o.ws_lanes_per_conn;
  if (end > r->nlanes) end = r->nlanes;
  lane_t *p = &r->lanes[first];
  if (p->closed) return;
  r->connections_closed++;
  if (had_error) r->socket_errors++;
  int fd = p->fd;
  if (r->use_uring) {
    shutdown(fd, SHUT_RDWR);
    for (int i = first; i < end; i++) uring_unregister_file(&r->u, (uint32_t)i);
  } else {
    epoll_ctl(r->ep, EPOLL_CTL_DEL, fd, NULL);
  }
  close(fd);
  r->ws_conns[first / r->o.ws_lanes_per_conn].npending = 0;
  for (int i = first; i < end; i++) {
    lane_t *l = &r->lanes[i];
    l->closed = 1;
    l->fd = -1;
    if (l->busy) {
      l->busy = 0;
      r->busy_count--;
      r->unanswered++;
    }
    if (r->o.open) drop_queue(r, &r->cold[i]);
  }
}

#endif
