// Micro benchmark of what metrics add to one signed request on the front thread (issue 16):
// - stamps: a StageStamps and its nine clock reads (stampMs, as the request path takes them);
// - record: Metrics.observeStages (nine BucketHistogram observations) + countRequest (one count
//   in the route map), what happens when the request is answered and its exchange ends;
// - prom_client: the same nine observations and one count through prom-client's own Histogram
//   and Counter (labels), the yardstick that made src/gateway/metrics/buckets.ts;
// and the time of one scrape (the text of every family, the front thread's work per scrape).
// Plain timing loops, best of ROUNDS (CPU time of this thread). The end-to-end comparison with
// the whole server is bench/load.ts's metrics on/off phase (docs/benchmarks.md, "metrics cost").
//
// Last line of output is one JSON object: {"bench":"metrics", ...}.
import { Counter, Histogram, Registry } from 'prom-client';
import { Metrics } from '../src/gateway/metrics/metrics.js';
import { STAGES, StageStamps, stampMs } from '../src/gateway/stage_timings.js';

const ITERATIONS = 200_000;
const ROUNDS = 5;
const SCRAPES = 200;

/** ns of CPU per iteration, best of ROUNDS. */
function nsPer(fn: (i: number) => void): number {
  let best = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < ITERATIONS; i++) fn(i);
    const c = process.cpuUsage(c0);
    best = Math.min(best, ((c.user + c.system) * 1000) / ITERATIONS);
  }
  return Math.round(best * 10) / 10;
}

/** A request's stamps 5..2000 µs apart (realistic spreads over the buckets). */
function stamped(i: number): StageStamps {
  const s = new StageStamps();
  let t = 1.7e12 + i;
  const step = (k: number): number => (t += 0.005 + ((i * 7 + k * 13) % 400) * 0.005);
  s.arrive = t; s.parsed = step(1); s.verify_start = step(2); s.verify_end = step(3); s.published = step(4);
  s.batch_start = step(5); s.applied = step(6); s.durable = step(7); s.answered = step(8);
  return s;
}

async function main(): Promise<void> {
  const metrics = new Metrics();
  const samples = Array.from({ length: 1024 }, (_, i) => stamped(i));
  const routes = ['POST /orders', 'DELETE /orders/:id', 'GET /markets/:market_id/book'];

  let sink = 0;
  const stamps_ns = nsPer(() => {
    const s = new StageStamps();
    s.arrive = stampMs(); s.parsed = stampMs(); s.verify_start = stampMs(); s.verify_end = stampMs(); s.published = stampMs();
    s.batch_start = stampMs(); s.applied = stampMs(); s.durable = stampMs(); s.answered = stampMs();
    sink += s.answered;
  });
  const record_ns = nsPer((i) => {
    metrics.observeStages(samples[i & 1023]);
    metrics.countRequest(routes[i % 3], 200);
  });

  const registry = new Registry();
  const buckets = [1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 1];
  const h = new Histogram({ name: 'x_stage_seconds', help: 'x', labelNames: ['stage'], buckets, registers: [registry] });
  const total = new Histogram({ name: 'x_request_seconds', help: 'x', buckets, registers: [registry] });
  const c = new Counter({ name: 'x_requests_total', help: 'x', labelNames: ['route', 'status'], registers: [registry] });
  const prom_ns = nsPer((i) => {
    const s = samples[i & 1023];
    h.observe({ stage: STAGES[0] }, (s.parsed - s.arrive) / 1000);
    h.observe({ stage: STAGES[1] }, (s.verify_start - s.parsed) / 1000);
    h.observe({ stage: STAGES[2] }, (s.verify_end - s.verify_start) / 1000);
    h.observe({ stage: STAGES[3] }, (s.published - s.verify_end) / 1000);
    h.observe({ stage: STAGES[4] }, (s.batch_start - s.published) / 1000);
    h.observe({ stage: STAGES[5] }, (s.applied - s.batch_start) / 1000);
    h.observe({ stage: STAGES[6] }, (s.durable - s.applied) / 1000);
    h.observe({ stage: STAGES[7] }, (s.answered - s.durable) / 1000);
    total.observe((s.answered - s.arrive) / 1000);
    c.inc({ route: routes[i % 3], status: '200' });
  });

  const t0 = process.cpuUsage();
  let bytes = 0;
  for (let i = 0; i < SCRAPES; i++) bytes = (await metrics.scrape()).length;
  const t = process.cpuUsage(t0);
  const scrape_ms = Math.round(((t.user + t.system) / 1000 / SCRAPES) * 100) / 100;

  const per_request_ns = Math.round((stamps_ns + record_ns) * 10) / 10;
  console.log(`metrics: per signed request on the front thread: stamps ${stamps_ns} ns + record ${record_ns} ns = ${per_request_ns} ns of CPU`);
  console.log(`  (through prom-client's own Histogram/Counter the recording would be ${prom_ns} ns: ${(prom_ns / record_ns).toFixed(1)}x)`);
  console.log(`  one scrape: ${scrape_ms} ms of CPU, ${bytes} bytes of text`);
  if (sink === 0) console.log('');
  console.log(JSON.stringify({
    bench: 'metrics', stamps_ns, record_ns, per_request_ns, prom_client_record_ns: prom_ns, scrape_ms, scrape_bytes: bytes,
  }));
  process.exit(0);
}

main().catch((e: unknown) => {
  console.error('metrics bench failed:', e);
  process.exit(1);
});
