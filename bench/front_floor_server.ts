// The bare uWS server of bench/front_floor.ts (issue 11): the same package and set-up as the
// gateway (`uWS.App()` with uWS's defaults, src/gateway/server.ts; `listenApp` of
// src/gateway/listen.ts: uWS's keep-alive as it comes), a POST route per signed path that reads
// the body whole (chunks copied as src/gateway/http_body.ts copies a multi-chunk body) and answers
// a fixed 200 of the real order answer's size with the real head (status, X-Request-Id,
// Content-Type: application/json), corked. No parse, no verify, no ring: what uWS, V8's callback
// machinery and the kernel's loopback TCP cost per request on their own.
//
// Run by bench/front_floor.ts as a child (`node dist/bench/front_floor_server.js`); prints
// `port <n>` once listening and exits when its stdin closes.
import uWS from 'uWebSockets.js';
import { listenApp } from '../src/gateway/listen.js';

/** The most body bytes a request may carry (the gateway's default `server.max_body_bytes` order). */
const BODY_BYTES_MAX = 64 * 1024;

/**
 * An accepted limit order's answer as the gateway writes it (docs/api.md "POST /orders"; the load
 * bench's flow: a resting gtc order, no fill): 371 bytes, within a few bytes of the real answers
 * (their ids, prices and client ids vary in length).
 */
export const ORDER_ANSWER_BODY = Buffer.from(
  '{"ok":true,"data":{"order_id":1234567,"client_order_id":"c12345","status":"open","market_id":"ETH-USDC",' +
    '"side":"bid","order_type":"limit","time_in_force":"gtc","price":1999990000,"quantity":4200,' +
    '"filled_quantity":0,"remaining_quantity":4200,"last_fill_price":0,' +
    '"created_at":"2026-11-28T04:10:11.123Z","updated_at":"2026-11-28T04:10:11.123Z",' +
    '"fills":[],"batch_id":123456}}',
  'latin1',
);

function main(): void {
  const app = uWS.App();
  let request_no = 0;
  // The head in one reused buffer, one uWS call (as src/gateway/reply_head.ts writes it).
  const head = Buffer.from('200 OK\r\nX-Request-Id: ', 'latin1');
  const head_end = Buffer.from('\r\nContent-Type: application/json', 'latin1');
  const head_buf = Buffer.alloc(128);
  head.copy(head_buf, 0);
  const onPost = (res: uWS.HttpResponse): void => {
    let aborted = false;
    let parts: Buffer[] | null = null;
    let bytes = 0;
    res.onAborted(() => {
      aborted = true;
    });
    res.onData((chunk, is_last) => {
      // uWS reuses the chunk's memory after the callback: copy what must outlive it.
      bytes += chunk.byteLength;
      if (!is_last || parts !== null) {
        (parts ??= []).push(Buffer.from(new Uint8Array(chunk).slice()));
        if (!is_last) return;
      }
      if (aborted || bytes > BODY_BYTES_MAX) return;
      let at = head.length + head_buf.write(String(++request_no), head.length, 'latin1');
      at += head_end.copy(head_buf, at);
      res.cork(() => {
        res.writeStatus(head_buf.subarray(0, at)).end(ORDER_ANSWER_BODY);
      });
    });
  };
  for (const p of ['/orders', '/orders/cancel', '/deposit']) app.post(p, onPost);
  listenApp(app, '127.0.0.1', 0).then(
    ({ port }) => console.log(`port ${port}`),
    (e: unknown) => {
      console.error(e instanceof Error ? e.message : e);
      process.exit(1);
    },
  );
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}

main();
