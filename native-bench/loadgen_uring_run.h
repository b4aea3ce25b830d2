// loadgen's io_uring backend: the lanes' sends, multishot recvs and the schedule's timeout on the
// ring, and the loop that reaps their completions (--io; what it saves: native-bench/README.md,
// "I/O", and docs/benchmarks.md, section h22g). Not a header of its own: part of loadgen.c,
// included there after the run's types and the functions it calls (take_answers, lane_closed,
// on_timer_fired); loadgen_uring.h holds the ring itself.
#ifndef LOADGEN_URING_RUN_H
#define LOADGEN_URING_RUN_H

// ---- operations (the epoll backend calls send/recv directly) ----

/** A completion's user_data: the operation in the top byte, the lane, and 32 bits of its own (send: bytes asked; timer: generation). */
enum { OP_RECV = 1, OP_SEND = 2, OP_TIMER = 3 };
static uint64_t user_data(uint64_t op, uint64_t lane, uint32_t data) { return op << 56 | lane << 32 | data; }

/**
 * One multishot recv per lane: it stays armed and posts a completion per arrival, each in a
 * buffer the kernel picks from the provided ring, so answers cost no submission at all.
 */
static void uring_arm_recv(run_t *r, int li) {
  struct io_uring_sqe *s = uring_sqe(&r->u);
  s->opcode = IORING_OP_RECV;
  s->fd = li; // the lane's fixed-file slot
  s->flags = IOSQE_FIXED_FILE | IOSQE_BUFFER_SELECT;
  s->ioprio = IORING_RECV_MULTISHOT;
  s->buf_group = 0;
  s->user_data = user_data(OP_RECV, (uint64_t)li, 0);
}

/**
 * Queues a send (submitted with the next io_uring_enter, together with every other lane's).
 * MSG_WAITALL: the kernel finishes a short send itself; CQE_SKIP_SUCCESS: a send that went out
 * whole posts no completion, so it does not wake the next io_uring_enter (with a completion per
 * send, the generator woke 1.7 times per answer instead of ~0.9: 16-lane smoke run). A failed one
 * still completes (uring_on_send).
 */
static void uring_send(run_t *r, int li, const uint8_t *p, uint32_t len) {
  struct io_uring_sqe *s = uring_sqe(&r->u);
  s->opcode = IORING_OP_SEND;
  s->fd = li;
  s->flags = IOSQE_FIXED_FILE | IOSQE_CQE_SKIP_SUCCESS;
  s->addr = (uint64_t)(uintptr_t)p;
  s->len = len;
  s->msg_flags = MSG_NOSIGNAL | MSG_WAITALL;
  s->user_data = user_data(OP_SEND, (uint64_t)li, len);
}

/** An absolute CLOCK_MONOTONIC timeout on the ring: armed with the next io_uring_enter, no syscall of its own. */
static void uring_arm_timeout(run_t *r, int64_t at) {
  r->timer_gen++;
  r->timer_at.tv_sec = at / 1000000000LL;
  r->timer_at.tv_nsec = at % 1000000000LL;
  struct io_uring_sqe *s = uring_sqe(&r->u);
  s->opcode = IORING_OP_TIMEOUT;
  s->fd = -1;
  s->addr = (uint64_t)(uintptr_t)&r->timer_at;
  s->len = 1;
  s->off = 0; // fire on time only, not after a count of completions
  s->timeout_flags = IORING_TIMEOUT_ABS;
  s->user_data = user_data(OP_TIMER, 0, r->timer_gen);
}

// ---- completions ----

/**
 * `n` bytes of lane li's stream arrived in a provided buffer (it goes back to the kernel after
 * this): complete answers are handled in place, the start of an unfinished one moves to the
 * lane's own buffer, as on_readable does with its shared buffer.
 */
static void uring_on_bytes(run_t *r, int li, const uint8_t *data, uint32_t n) {
  lane_t *l = &r->lanes[li];
  lane_cold_t *c = &r->cold[li];
  const uint8_t *buf = data;
  uint64_t total = n;
  if (l->rlen > 0) {
    total = (uint64_t)l->rlen + n;
    if (total > MESSAGE_BYTES_MAX) { r->protocol_errors++; lane_closed(r, li, 1); return; }
    lane_reserve(c, total);
    memcpy(c->rbuf + l->rlen, data, n);
    buf = c->rbuf;
  }
  uint64_t need;
  uint32_t pos = take_answers(r, li, buf, (uint32_t)total, &need);
  if (l->closed) return;
  uint32_t left = (uint32_t)total - pos;
  if (left > 0 && buf == data) {
    lane_reserve(c, need > left ? need : left);
    memcpy(c->rbuf, buf + pos, left);
  } else if (left > 0) {
    if (pos > 0) memmove(c->rbuf, c->rbuf + pos, left);
    lane_reserve(c, need);
  }
  l->rlen = left;
}

/** A multishot recv completion: bytes, the peer's close (0), or the recv's end (no F_MORE: re-armed). */
static void uring_on_recv(run_t *r, int li, int res, uint32_t flags) {
  lane_t *l = &r->lanes[li];
  if (res > 0) {
    uint16_t bid = (uint16_t)(flags >> IORING_CQE_BUFFER_SHIFT);
    if (!l->closed) {
      r->reads++;
      r->read_bytes += (uint64_t)res;
      uring_on_bytes(r, li, r->u.bufs + (size_t)bid * URING_BUF_BYTES, (uint32_t)res);
    }
    uring_buf_recycle(&r->u, bid);
  } else if (res == 0) {
    lane_closed(r, li, 0);
    return;
  } else if (res == -ENOBUFS) {
    // Every provided buffer was taken (answers not yet reaped): the recv ends, its bytes wait in
    // the socket, and it is armed again below, after the reaped buffers are returned.
    r->uring_nobufs++;
  } else {
    if (res != -ECANCELED) lane_closed(r, li, 1);
    return;
  }
  if (!(flags & IORING_CQE_F_MORE) && !l->closed) {
    r->uring_rearms++;
    uring_arm_recv(r, li);
  }
}

/** A send completion: a short one (or an error) is what needs doing; a full one needs nothing. */
static void uring_on_send(run_t *r, int li, int res, uint32_t asked) {
  lane_t *l = &r->lanes[li];
  if (l->closed) return;
  if (res < 0 || ((uint32_t)res < asked && r->o.ws_lanes_per_conn > 1)) { lane_closed(r, li, 1); return; }
  if ((uint32_t)res < asked) {
    // Its answer cannot have come before the whole request went out, so the lane's in-flight
    // request is still this one: send what is left of it.
    l->woff -= asked - (uint32_t)res;
    flush(r, li);
  }
}

/**
 * Before a batch is handled, pulls in the next request of every lane answered in it: each answer
 * sends that lane's next request, whose record (read in place in the map) was prefetched when the
 * previous one was submitted, a round trip (~ms) ago, and by now is often evicted by the kernel's
 * TCP work (perf: send_next's first read of the record was its one hot instruction). Issued here,
 * the lines arrive while the answers before it in the batch are parsed.
 */
static void prefetch_batch(const run_t *r, uint32_t head, uint32_t tail) {
  const uring_t *u = &r->u;
  for (; head != tail; head++) {
    const struct io_uring_cqe *c = &u->cqes[head & *u->cq_mask];
    if ((c->user_data >> 56) != OP_RECV || c->res <= 0) continue;
    prefetch_next(&r->lanes[(c->user_data >> 32) & 0xffffffu]);
  }
}

/**
 * One io_uring_enter: submits every queued send, recv and timeout, waits for one completion if
 * none is there, then handles all that have arrived (their sends go out with the next enter).
 */
static void uring_loop_once(run_t *r) {
  uring_t *u = &r->u;
  if (r->nws_dirty > 0) ws_flush_all(r);
  uring_buf_publish(u);
  int e = uring_enter(u, 1);
  // EINTR: a signal; EBUSY/EAGAIN: the kernel wants completions reaped first. Reap, then enter again.
  if (e < 0 && e != -EINTR && e != -EBUSY && e != -EAGAIN) die("io_uring_enter: %s", strerror(-e));
  r->waits++;
  for (int round = 0; round < 64; round++) {
    uint32_t head = *u->cq_head;
    uint32_t tail = atomic_load_explicit((_Atomic uint32_t *)u->cq_tail, memory_order_acquire);
    if (head == tail) break;
    // One clock read for this batch of completions: every answer in it was in by now.
    r->batch_ns = now_ns();
    prefetch_batch(r, head, tail);
    for (; head != tail; head++) {
      const struct io_uring_cqe *c = &u->cqes[head & *u->cq_mask];
      uint64_t ud = c->user_data;
      int res = c->res;
      uint32_t flags = c->flags;
      int li = (int)((ud >> 32) & 0xffffffu);
      r->uring_completions++;
      switch (ud >> 56) {
        case OP_RECV: uring_on_recv(r, li, res, flags); break;
        case OP_SEND: uring_on_send(r, li, res, (uint32_t)ud); break;
        case OP_TIMER:
          if ((uint32_t)ud == r->timer_gen && res == -ETIME) on_timer_fired(r);
          break;
        default: break;
      }
    }
    atomic_store_explicit((_Atomic uint32_t *)u->cq_head, head, memory_order_release);
  }
  r->wait_events = r->uring_completions;
}

/**
 * io_uring for this run when the options allow it and the kernel gives it (ring, provided
 * buffers); else the reason on r->io_fallback and epoll. --io io_uring makes a refusal fatal.
 * auto keeps epoll in open mode: at a fixed rate the generator's CPU is its sleeps (a timer wake
 * and an answer wake per request), which io_uring does not change (B/A 0.96 at 1,000/s, 0.97 at
 * 2,000/s, 1.07 at 3,000/s: docs/benchmarks.md, h22g), and epoll stamps each send as it is made.
 */
static void choose_io(run_t *r) {
  if (r->o.io == IO_EPOLL) return;
  if (r->o.io == IO_AUTO && r->o.open) { r->io_fallback = "open mode (auto keeps epoll at a fixed rate)"; return; }
  const char *why = NULL;
  uint32_t entries = pow2_at_least((uint32_t)r->nlanes * 2 + 8);
  int e = uring_init(&r->u, entries, &why);
  if (e == 0) {
    // --recv-buffers (a test's few, to run them out for certain) or 2 per lane, 64 to URING_BUFS_MAX.
    uint32_t nbufs = r->o.recv_buffers;
    if (nbufs == 0) {
      nbufs = pow2_at_least((uint32_t)r->nlanes * 2);
      if (nbufs < 64) nbufs = 64;
      if (nbufs > URING_BUFS_MAX) nbufs = URING_BUFS_MAX;
    }
    e = uring_setup_buffers(&r->u, nbufs);
    if (e != 0) why = "provided buffer ring (kernel < 5.19)";
  }
  if (e != 0) {
    if (r->o.io == IO_URING) die("--io io_uring: %s: %s", why, strerror(-e));
    // The step and the kernel's errno, as --io io_uring would name them (EPERM: a sandbox's
    // seccomp or io_uring_disabled; ENOSYS: a kernel without io_uring).
    static char fallback[160];
    snprintf(fallback, sizeof fallback, "%s: %s", why, strerror(-e));
    r->io_fallback = fallback;
    return;
  }
  r->use_uring = 1;
}

#endif
