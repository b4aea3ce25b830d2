// loadgen's send side: a lane starts its next request, the send stamps (native-bench/README.md,
// "Stamps"), the write (epoll's send, or a send queued on the ring), and what a free, empty or
// closed lane does next. Part of loadgen.c, included after loadgen_run.h.
#ifndef LOADGEN_SEND_H
#define LOADGEN_SEND_H
#include "loadgen_input.h"
#include "loadgen_run.h"

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
  if (r->o.ws_lanes_per_conn > 1) {
    // Shared socket: the frame waits for the loop's next wait, with the other lanes' (stamped there).
    ws_queue_send(r, li);
    prefetch_next(l);
    return 1;
  }
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
  if (r->o.ws_lanes_per_conn > 1) { ws_conn_closed(r, li, had_error); return; } // the socket's every lane
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

#endif
