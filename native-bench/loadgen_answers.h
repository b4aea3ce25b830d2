// loadgen's answers: complete answers taken from a lane's bytes (either backend's), counted by
// status and error code, timed (latency, service, records), and the lane's next request started.
// Part of loadgen.c, included after loadgen_send.h.
#ifndef LOADGEN_ANSWERS_H
#define LOADGEN_ANSWERS_H
#include "loadgen_http.h"
#include "loadgen_send.h"

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
  if (r->o.ws) return take_ws_answers(r, li, buf, n, need);
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

#endif
