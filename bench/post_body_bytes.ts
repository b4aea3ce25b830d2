// Bytes the front allocates per POST exchange on its body path (issue 11, branch h11g): the route
// wrapper (context.ts postRoute: the Reply, the abort watch, the body reader and its uWS callback,
// the UTF-8 text and JSON parse of the body) for a signed order's ~355-byte body, through fake uWS
// objects (no server, no socket): the route itself does nothing. Counted as the growth of V8's new
// space over `--exchanges` exchanges with the young generation set large enough that no scavenge
// runs inside a round, less what the harness's own fake objects take (measured the same way).
// Unlike the load bench's `--gc` counts it depends neither on the machine's load nor on the batch
// sizes, so two builds compare exactly.
//
// Run: npx tsc -p tsconfig.json && node dist/bench/post_body_bytes.js (it runs itself again under
// `--expose-gc --min-semi-space-size=64 --max-semi-space-size=64` when started without them)
//   --exchanges N  exchanges per round (default 4,000; 5 rounds, the median is reported)
//   --dist DIR     another build's dist/ to measure instead (an A/B: e.g. /work/wt/start/dist)
// Ends with one JSON line.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Knobs } from './knobs.js';
import { gc, newSpaceUsed, runWithByteCountFlags } from './byte_count_flags.js';
import { medianUpperMiddle } from './quantile.js';

type Handler = (res: unknown, req: unknown) => void;

interface FakeResponse {
  data: ((chunk: ArrayBuffer, last: boolean) => void) | null;
  onData(h: (chunk: ArrayBuffer, last: boolean) => void): FakeResponse;
  onAborted(h: () => void): FakeResponse;
}

function fakeResponse(): FakeResponse {
  return {
    data: null,
    onData(h) {
      this.data = h;
      return this;
    },
    onAborted() {
      return this;
    },
  };
}

async function main(): Promise<void> {
  const knobs = new Knobs();
  const n = knobs.number('exchanges', 4000, 100, 20_000);
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dist = path.resolve(knobs.optionalString('dist') ?? path.resolve(here, '..'));
  knobs.finish();
  const { postRoute } = (await import(path.join(dist, 'src/gateway/context.js'))) as {
    postRoute: (ctx: unknown, opts: { admin: boolean; stamped?: boolean }, fn: () => void) => Handler;
  };
  const ctx = {
    closing: false, metrics: null, stages: null, open_exchanges: 0, access_log: false,
    cfg: { limits: { http_body_bytes_max: 65_536, http_body_drain_bytes_max: 1 << 20 } },
  };
  let routed = 0;
  const handler = postRoute(ctx, { admin: false, stamped: false }, () => {
    routed++;
  });
  const bodies: Buffer[] = [];
  for (let i = 0; i < 1000; i++) {
    bodies.push(Buffer.from(
      `{"user":"0x${(1e9 + i).toString(16).padStart(40, '0')}","market_id":"ETH-USDC","side":"bid","price":${2_000_000_000 + i * 10_000},` +
      `"quantity":${100_000 * (1 + (i % 7))},"order_type":"limit","time_in_force":"gtc","nonce":${i + 1000},"client_order_id":"c${i + 1000}",` +
      `"signature":"0x${'ab'.repeat(65)}"}`,
    ));
  }
  const content_length = String(bodies[0].length);
  const req = { getQuery: () => undefined, getHeader: () => content_length, getParameter: () => '', getMethod: () => 'post' };
  // What uWS hands over per exchange (a response object, the body's chunk): the harness's share.
  const harness = (i: number): FakeResponse => {
    const res = fakeResponse();
    const b = bodies[i % 1000];
    const chunk = new ArrayBuffer(b.length);
    new Uint8Array(chunk).set(b);
    return res;
  };
  const exchange = (i: number): void => {
    const res = fakeResponse();
    handler(res, req);
    const b = bodies[i % 1000];
    const chunk = new ArrayBuffer(b.length);
    new Uint8Array(chunk).set(b);
    (res.data as (chunk: ArrayBuffer, last: boolean) => void)(chunk, true);
  };
  const round = (fn: (i: number) => unknown): number => {
    gc();
    const before = newSpaceUsed();
    for (let i = 0; i < n; i++) fn(i);
    const grown = newSpaceUsed() - before;
    if (grown <= 0) throw new Error('new space shrank inside a round: a scavenge ran (run with --min-semi-space-size=64 --max-semi-space-size=64)');
    return grown / n;
  };
  for (let w = 0; w < 5; w++) round(exchange); // warm-up: compiled code, caches
  const totals: number[] = [];
  const harnesses: number[] = [];
  for (let r = 0; r < 5; r++) {
    totals.push(round(exchange));
    harnesses.push(round(harness));
  }
  if (routed !== 10 * n) throw new Error(`the route ran ${routed} times for ${10 * n} exchanges`);
  const per_exchange = Math.round(medianUpperMiddle(totals) - medianUpperMiddle(harnesses));
  console.log(`post_body_bytes: ${dist}, ${n} exchanges x 5 rounds: ${per_exchange} B per POST exchange on the body path ` +
    `(rounds ${totals.map((x) => Math.round(x)).join(' / ')} B, less the harness's ${Math.round(medianUpperMiddle(harnesses))} B)`);
  console.log(JSON.stringify({ bench: 'post_body_bytes', dist, exchanges: n, body_bytes: bodies[0].length, bytes_per_exchange: per_exchange }));
}

await runWithByteCountFlags(import.meta.url, main);
