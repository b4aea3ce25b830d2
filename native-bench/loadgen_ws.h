// loadgen's WebSocket transport (--transport ws): each connection upgrades at GET /ws, then
// carries the request file's records, which are already whole client frames (text, masked per
// RFC 6455 5.3 with a fresh random key each, built by Node before timing: bench/load/ws_frames.ts),
// so a send is the same write of pre-built bytes as over HTTP and the generator never masks on the
// request path. Each frame is the order-entry message
// `{"type":"post","id":"<lane>:<k>","path":"/orders","body":<the same signed body>}` (DECISIONS,
// "Order entry over WebSocket"); the server answers `{"type":"response","id":..,"status":..,"body":..}`.
//
// Decisions:
// - Window 1 per lane, as over HTTP: each wallet's nonces arrive in order. By default one lane per
//   connection, so the two transports differ only in framing; --ws-lanes-per-connection K puts K
//   lanes (K posts in flight) on one connection (loadgen_ws_lanes.h).
// - Correlation: the answer's id must name one of this connection's lanes and that lane's
//   in-flight request's index k in its queue (cold.n - left - 1); any other id is an error, never
//   a silent count.
// - Server frames are parsed just enough: one unfragmented text frame per answer (uWS never
//   fragments), pings answered with a masked pong at once, pongs ignored; a close frame, a binary or
//   fragmented frame, a masked server frame, RSV bits (no extension is offered) or a text message
//   that is not a response close the connection and count as protocol_errors, the first of each
//   kind said on stderr. A failed handshake ends the run (exit 2) with the server's status line.
// Part of loadgen.c, included after loadgen_answers.h.
#ifndef LOADGEN_WS_H
#define LOADGEN_WS_H
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include "loadgen_answers.h"
#include "loadgen_sha1.h"

/** The upgrade path (spec: GET /ws). */
#define WS_PATH "/ws"
/** Largest handshake answer read (uWS's 101 is ~130 bytes). */
#define WS_HANDSHAKE_BYTES_MAX 4096
/** Longest wait for the 101 (a blocking recv's SO_RCVTIMEO). */
#define WS_HANDSHAKE_TIMEOUT_S 10
/** RFC 6455 5.5: a control frame's payload is at most 125 bytes. */
#define WS_CONTROL_PAYLOAD_MAX 125
/** Bytes of an unexpected message quoted on stderr. */
#define WS_QUOTE_MAX 200

static const char WS_GUID[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/** Upgrades lane li's blocking socket; bytes read past the 101's head go to the lane's buffer. */
static void ws_handshake(run_t *r, int li, int fd) {
  uint8_t raw[16];
  if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) die("getrandom: %s", strerror(errno));
  char key[25], accept[29];
  base64_encode(raw, sizeof raw, key);
  uint8_t cat[24 + sizeof WS_GUID - 1], digest[20];
  memcpy(cat, key, 24);
  memcpy(cat + 24, WS_GUID, sizeof WS_GUID - 1);
  sha1_short(cat, sizeof cat, digest);
  base64_encode(digest, sizeof digest, accept);
  char req[256];
  int n = snprintf(req, sizeof req, "GET " WS_PATH " HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", r->o.host, r->o.port, key);
  if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) die("WebSocket handshake, connection %d: sending the upgrade: %s", li, strerror(errno));
  struct timeval tv = {.tv_sec = WS_HANDSHAKE_TIMEOUT_S};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  static uint8_t buf[WS_HANDSHAKE_BYTES_MAX + 1];
  uint32_t have = 0;
  const uint8_t *end = NULL;
  while (end == NULL) { // bounded: each pass reads >= 1 byte of at most WS_HANDSHAKE_BYTES_MAX
    if (have == WS_HANDSHAKE_BYTES_MAX) die("WebSocket handshake, connection %d: no end of the answer's head in %u bytes", li, WS_HANDSHAKE_BYTES_MAX);
    ssize_t got = recv(fd, buf + have, WS_HANDSHAKE_BYTES_MAX - have, 0);
    if (got <= 0) die("WebSocket handshake, connection %d: %s before the server's answer to GET " WS_PATH, li, got == 0 ? "connection closed" : strerror(errno));
    have += (uint32_t)got;
    buf[have] = '\0';
    end = memmem(buf, have, "\r\n\r\n", 4);
  }
  uint32_t head = (uint32_t)(end + 4 - buf);
  const uint8_t *eol = memchr(buf, '\r', head);
  int line = (int)(eol - buf);
  if (line < 12 || memcmp(buf, "HTTP/1.1 101", 12) != 0)
    die("WebSocket handshake, connection %d: GET " WS_PATH " was answered '%.*s', not 101 Switching Protocols (is this a Ringbook server with the WebSocket API?)", li, line > 120 ? 120 : line, buf);
  const char *acc = strcasestr((const char *)buf, "\r\nsec-websocket-accept:");
  const char *v = acc == NULL ? NULL : acc + 23;
  while (v != NULL && *v == ' ') v++;
  if (v == NULL || strncmp(v, accept, 28) != 0) die("WebSocket handshake, connection %d: Sec-WebSocket-Accept missing or wrong (expected %s)", li, accept);
  struct timeval none = {0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
  if (have > head) {
    lane_reserve(&r->cold[li], have - head);
    memcpy(r->cold[li].rbuf, buf + head, have - head);
    r->lanes[li].rlen = have - head;
  }
}

/** Counts a frame the bench cannot take as an answer, says the first of each kind, closes the lane. */
static void ws_unexpected(run_t *r, int li, int kind, const char *what, const uint8_t *p, uint32_t len) {
  r->protocol_errors++;
  r->ws_unexpected++;
  if (p == NULL) p = (const uint8_t *)"";
  if (!(r->ws_said & (1u << kind))) {
    r->ws_said |= 1u << kind;
    int q = len > WS_QUOTE_MAX ? WS_QUOTE_MAX : (int)len;
    fprintf(stderr, "loadgen: connection %d: unexpected WebSocket frame: %s%s%.*s\n", li, what, q > 0 ? ": " : "", q, (const char *)p);
  }
  lane_closed(r, li, 1);
}
enum { WS_UNEXPECTED_MESSAGE, WS_UNEXPECTED_ID, WS_UNEXPECTED_FRAME, WS_UNEXPECTED_CLOSE, WS_UNEXPECTED_PONG };

/** xorshift64* for pong masks (RFC 6455 wants them unpredictable; the seed comes from getrandom). */
static uint32_t ws_mask_key(run_t *r) {
  if (r->ws_rng == 0 && getrandom(&r->ws_rng, sizeof r->ws_rng, 0) != (ssize_t)sizeof r->ws_rng) die("getrandom: %s", strerror(errno));
  r->ws_rng ^= r->ws_rng >> 12;
  r->ws_rng ^= r->ws_rng << 25;
  r->ws_rng ^= r->ws_rng >> 27;
  return (uint32_t)((r->ws_rng * 0x2545F4914F6CDD1DULL) >> 32) | 1u;
}

/**
 * Answers a ping with a masked pong of its payload, written at once with send(): frames are
 * whole on the stream (a request frame of <= 16 KiB goes out in one write to an empty loopback
 * socket; a pong between two whole frames is legal). A ping that comes while a request frame is
 * half-written (epoll's partial write, never seen) is an error rather than a corrupted stream.
 */
static int ws_conn_mid_frame(const run_t *r, int li);
static void ws_pong(run_t *r, int li, const uint8_t *p, uint32_t len) {
  lane_t *l = &r->lanes[li];
  r->ws_pings++;
  if (r->o.ws_lanes_per_conn > 1 ? ws_conn_mid_frame(r, li) : l->busy && l->woff < l->cur_len) { ws_unexpected(r, li, WS_UNEXPECTED_PONG, "a ping while a request frame was half-written", NULL, 0); return; }
  uint8_t f[6 + WS_CONTROL_PAYLOAD_MAX];
  uint32_t key = ws_mask_key(r);
  f[0] = 0x8A; // FIN, pong
  f[1] = (uint8_t)(0x80 | len);
  memcpy(f + 2, &key, 4);
  for (uint32_t i = 0; i < len; i++) f[6 + i] = p[i] ^ f[2 + (i & 3)];
  if (send(l->fd, f, 6 + len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)(6 + len)) {
    fprintf(stderr, "loadgen: connection %d: the pong could not be written whole (%s)\n", li, strerror(errno));
    lane_closed(r, li, 1);
  }
}

static uint64_t ws_digits(const uint8_t **q, const uint8_t *end, int *ok) {
  uint64_t v = 0;
  int n = 0;
  while (*q < end && **q >= '0' && **q <= '9' && n < 19) { v = v * 10 + (uint64_t)(**q - '0'); (*q)++; n++; }
  *ok = n > 0;
  return v;
}

/** One text message: `{"type":"response","id":"<lane>:<k>","status":NNN,"body":<body>}` (post.ts responseMessage). */
static void ws_on_text(run_t *r, int li, const uint8_t *p, uint32_t len) {
  static const char head[] = "{\"type\":\"response\",\"id\":\"", status_key[] = "\",\"status\":", body_key[] = ",\"body\":";
  const uint8_t *q = p + sizeof head - 1, *end = p + len;
  int ok_lane = 0, ok_k = 0, ok_status = 0;
  if (len < sizeof head + 16 || memcmp(p, head, sizeof head - 1) != 0 || p[len - 1] != '}') {
    ws_unexpected(r, li, WS_UNEXPECTED_MESSAGE, "a text message that is not a post's response", p, len);
    return;
  }
  uint64_t lane_no = ws_digits(&q, end, &ok_lane);
  uint64_t k = 0;
  if (q < end && *q == ':') { q++; k = ws_digits(&q, end, &ok_k); }
  if (!ok_lane || !ok_k || (size_t)(end - q) < sizeof status_key - 1 || memcmp(q, status_key, sizeof status_key - 1) != 0) {
    ws_unexpected(r, li, WS_UNEXPECTED_ID, "a response whose id is not <lane>:<k>", p, len);
    return;
  }
  q += sizeof status_key - 1;
  int status = (int)ws_digits(&q, end, &ok_status);
  if (!ok_status || (size_t)(end - q) < sizeof body_key || memcmp(q, body_key, sizeof body_key - 1) != 0) {
    ws_unexpected(r, li, WS_UNEXPECTED_MESSAGE, "a response without status and body", p, len);
    return;
  }
  q += sizeof body_key - 1;
  // li is the socket's first lane; its lanes are li .. li + K - 1 (K = 1: li alone).
  uint64_t first = (uint64_t)li, lanes_end = first + (uint64_t)r->o.ws_lanes_per_conn;
  if (lanes_end > (uint64_t)r->nlanes) lanes_end = (uint64_t)r->nlanes;
  int in_conn = lane_no >= first && lane_no < lanes_end;
  int to = in_conn ? (int)lane_no : li;
  const lane_t *l = &r->lanes[to];
  if (!in_conn || (l->busy && k != (uint64_t)(r->cold[to].n - l->left - 1))) {
    r->ws_id_mismatches++;
    ws_unexpected(r, li, WS_UNEXPECTED_ID, "the answer to another request (id mismatch)", p, len);
    return;
  }
  on_response(r, to, status, q, (size_t)(end - 1 - q), 0); // not busy: counted as unexpected there
}

/** The server's close frame: its code and reason said once, the lane closed. */
static void ws_on_close(run_t *r, int li, const uint8_t *p, uint32_t len) {
  r->ws_closes++;
  unsigned code = len >= 2 ? (unsigned)p[0] << 8 | p[1] : 1005;
  char what[64];
  snprintf(what, sizeof what, "the server closed the WebSocket (code %u)", code);
  ws_unexpected(r, li, WS_UNEXPECTED_CLOSE, what, len > 2 ? p + 2 : NULL, len > 2 ? len - 2 : 0);
}

/**
 * Handles every complete frame in buf[0, n); returns the bytes they took. What is left is the
 * start of a frame; *need is its whole size when its header is in (else 0). take_answers' twin.
 */
static uint32_t take_ws_answers(run_t *r, int li, const uint8_t *buf, uint32_t n, uint64_t *need) {
  lane_t *l = &r->lanes[li];
  uint32_t pos = 0;
  *need = 0;
  while (pos < n && !l->closed) { // bounded: each pass takes a whole frame (>= 2 bytes) or stops
    const uint8_t *f = buf + pos;
    uint32_t avail = n - pos, hl = 2;
    if (avail < 2) break;
    uint64_t plen = f[1] & 0x7f;
    if (plen == 126) {
      hl = 4;
      if (avail < hl) break;
      plen = (uint64_t)f[2] << 8 | f[3];
    } else if (plen == 127) {
      hl = 10;
      if (avail < hl) break;
      plen = 0;
      for (int i = 0; i < 8; i++) plen = plen << 8 | f[2 + i];
    }
    uint8_t op = f[0] & 0x0f;
    int fin = (f[0] & 0x80) != 0, control = (op & 0x8) != 0;
    if (f[1] & 0x80) { ws_unexpected(r, li, WS_UNEXPECTED_FRAME, "a masked frame from the server", NULL, 0); break; }
    if (plen > MESSAGE_BYTES_MAX || (control && (plen > WS_CONTROL_PAYLOAD_MAX || !fin))) { ws_unexpected(r, li, WS_UNEXPECTED_FRAME, "a frame too long for its kind", NULL, 0); break; }
    if (hl + plen > avail) { *need = hl + plen; break; }
    const uint8_t *p = f + hl;
    uint32_t len = (uint32_t)plen;
    if ((f[0] & 0x70) != 0) ws_unexpected(r, li, WS_UNEXPECTED_FRAME, "RSV bits set (no extension was offered)", NULL, 0);
    else if (op == 0x1 && fin) ws_on_text(r, li, p, len);
    else if (op == 0x9) ws_pong(r, li, p, len);
    else if (op == 0xA) r->ws_pongs++;
    else if (op == 0x8) ws_on_close(r, li, p, len);
    else ws_unexpected(r, li, WS_UNEXPECTED_FRAME, op == 0x2 ? "a binary frame" : (op == 0x0 || op == 0x1) ? "a fragmented message" : "an unknown opcode", NULL, 0);
    pos += hl + len;
  }
  return pos;
}

#endif
