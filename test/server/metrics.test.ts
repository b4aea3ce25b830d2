// Prometheus metrics on the real server (config metrics; docs/operations.md "Metrics"): after a
// load of signed requests, the scrape's request counts by route and status are the responses the
// client saw, the signed path's stage histograms hold one observation per committed request, and
// every family the issue names (and the Grafana dashboard queries) is there.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, deposit, REPO_ROOT, startServer, Wallet, type Api, type StartedServer } from './harness.js';
import { WsClient, sleep } from '../ws/client.js';
import { serverPerFile } from './per_file.js';
import { familiesOf, metricsPort, parseSamples, scrape, type Sample } from './metrics_scrape.js';

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const hit = samples.find((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
  return hit?.value;
}

/** Every family issue 16 names (beyond prom-client's process ones, checked apart). */
export const RINGBOOK_FAMILIES: Readonly<Record<string, string>> = {
  ringbook_http_requests_total: 'counter',
  ringbook_signed_stage_seconds: 'histogram',
  ringbook_signed_request_seconds: 'histogram',
  ringbook_batch_requests: 'histogram',
  ringbook_batches_committed_total: 'counter',
  ringbook_ring_depth_slots: 'gauge',
  ringbook_request_ring_full_total: 'counter',
  ringbook_requests_in_flight: 'gauge',
  ringbook_verify_pool_queue_tasks: 'gauge',
  ringbook_verify_pool_pending_tasks: 'gauge',
  ringbook_verify_pending_signatures: 'gauge',
  ringbook_signatures_verified_total: 'counter',
  ringbook_verify_front_checks_total: 'counter',
  ringbook_journal_commit_seconds: 'histogram',
  ringbook_journal_failing: 'gauge',
  ringbook_journal_failing_seconds: 'gauge',
  ringbook_journal_faults_total: 'counter',
  ringbook_state_root_seconds: 'histogram',
  ringbook_committed_batch_id: 'gauge',
  ringbook_da_published_batch_id: 'gauge',
  ringbook_da_lag_batches: 'gauge',
  ringbook_ws_connections: 'gauge',
  ringbook_ws_subscriptions: 'gauge',
  ringbook_ws_messages_total: 'counter',
  ringbook_ws_published_total: 'counter',
  ringbook_ws_dropped_total: 'counter',
  ringbook_accounts: 'gauge',
  ringbook_open_orders: 'gauge',
  ringbook_price_levels: 'gauge',
  ringbook_inbox_entries: 'gauge',
  ringbook_metrics_recording: 'gauge',
  ringbook_failed_signatures_total: 'counter',
};

const STAGE_NAMES = ['http_parse', 'verify_queue', 'verify', 'request_ring', 'batch_wait', 'matcher', 'journal_fsync', 'answer'];

describe('metrics on the real server', () => {
  let s: StartedServer;
  let a: Api;
  let port: number;

  serverPerFile((started, client) => {
    s = started;
    a = client;
    port = metricsPort(started);
  });

  it('counts a load of signed requests by route and status, and times each committed one per stage', async () => {
    const wallets = Array.from({ length: 8 }, () => Wallet.random());
    // Every response the client sees, by `METHOD /pattern` and status.
    const seen = new Map<string, number>();
    const note = (route: string, status: number): void => {
      const k = `${route} ${status}`;
      seen.set(k, (seen.get(k) ?? 0) + 1);
    };
    for (const w of wallets) note('POST /deposit', (await deposit(s, w.address, 'USDC', '1000000')).status);
    // Bids (resting: 200), bids over the balance (engine refusal: 400 INSUFFICIENT_BALANCE), bad
    // signatures (401, never reach the matcher), all concurrently per wallet.
    let committed_signed = 0;
    const sends: Promise<void>[] = [];
    wallets.forEach((w, k) => {
      for (let i = 0; i < 6; i++) {
        const quantity = i === 5 ? 10_000_000_000 : 100_000;
        const o = w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000 + (k * 6 + i) * 10_000, quantity });
        sends.push(a.post('/orders', o).then((r) => note('POST /orders', r.status)));
        committed_signed++;
      }
      const bad = w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100_000 }, { signer: () => '0x' + '11'.repeat(65) });
      sends.push(a.post('/orders', bad).then((r) => note('POST /orders', r.status)));
    });
    await Promise.all(sends);
    for (let i = 0; i < 3; i++) note('GET /markets/:market_id/book', (await a.get('/markets/ETH-USDC/book')).status);
    note('GET /account/:address/orders', (await a.get(`/account/${wallets[0].address}/orders`)).status);
    note('ANY /*', (await a.get('/no/such/route')).status);
    // The load produced what it was meant to: accepted, refused by the engine, refused signatures.
    expect(seen.get('POST /orders 200')).toBe(8 * 5);
    expect(seen.get('POST /orders 400')).toBe(8);
    expect(seen.get('POST /orders 401')).toBe(8);
    expect(seen.get('POST /deposit 200')).toBe(8);

    const r = await scrape(port);
    expect(r.status).toBe(200);
    expect(r.type).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = parseSamples(r.text);
    const counted = new Map<string, number>();
    for (const x of samples) {
      if (x.name === 'ringbook_http_requests_total') counted.set(`${x.labels.route} ${x.labels.status}`, x.value);
    }
    expect(Object.fromEntries(counted)).toEqual(Object.fromEntries(seen));

    // One observation per stage for each signed request that was committed (refused signatures
    // never reach the matcher), and the stages add up to the whole.
    for (const stage of STAGE_NAMES) {
      expect(value(samples, 'ringbook_signed_stage_seconds_count', { stage }), stage).toBe(committed_signed);
      expect(value(samples, 'ringbook_signed_stage_seconds_bucket', { stage, le: '+Inf' }), stage).toBe(committed_signed);
    }
    expect(value(samples, 'ringbook_signed_request_seconds_count')).toBe(committed_signed);
    const stage_sum = STAGE_NAMES.reduce((acc, stage) => acc + (value(samples, 'ringbook_signed_stage_seconds_sum', { stage }) ?? 0), 0);
    expect(stage_sum).toBeCloseTo(value(samples, 'ringbook_signed_request_seconds_sum') ?? -1, 6);
    // Every request the engine applied sits in exactly one committed batch.
    expect(value(samples, 'ringbook_batch_requests_sum')).toBe(8 + committed_signed);
    const batches = value(samples, 'ringbook_batches_committed_total') ?? 0;
    expect(batches).toBeGreaterThan(0);
    expect(value(samples, 'ringbook_batch_requests_count')).toBe(batches);
    expect(value(samples, 'ringbook_journal_commit_seconds_count')).toBe(batches);
    // Engine gauges from the read model: 8 accounts, 40 resting bids at 40 distinct prices.
    expect(value(samples, 'ringbook_accounts')).toBe(8);
    expect(value(samples, 'ringbook_open_orders')).toBe(40);
    expect(value(samples, 'ringbook_price_levels')).toBe(40);
    expect(value(samples, 'ringbook_inbox_entries')).toBe(0);
    expect(value(samples, 'ringbook_signatures_verified_total')).toBeGreaterThanOrEqual(8 * 7);
    expect(value(samples, 'ringbook_ring_depth_slots', { ring: 'request' })).toBe(0);
    // Every bad signature the client saw refused (401) was a failed check charged to its IP; none
    // was refused unchecked (the harness raises the per-IP budget out of the way).
    expect(seen.get('POST /orders 401') ?? 0).toBeGreaterThan(0);
    expect(value(samples, 'ringbook_failed_signatures_total', { outcome: 'failed' })).toBe(seen.get('POST /orders 401'));
    expect(value(samples, 'ringbook_failed_signatures_total', { outcome: 'refused_unchecked' })).toBe(0);
  });

  it('shows the DA thread catching up and WebSocket connections, subscriptions and messages', async () => {
    const c = await WsClient.connect(s.url);
    c.send({ type: 'subscribe', channels: ['trades:ETH-USDC', 'book:ETH-USDC'] });
    await c.next((m) => m.type === 'subscribed');
    // The DA thread reports its roots a little after the answers: wait (bounded) for lag 0.
    let samples: Sample[] = [];
    for (let i = 0; i < 100; i++) {
      samples = parseSamples((await scrape(port)).text);
      if (value(samples, 'ringbook_da_lag_batches') === 0 && (value(samples, 'ringbook_da_published_batch_id') ?? 0) > 0) break;
      await sleep(20);
    }
    expect(value(samples, 'ringbook_da_lag_batches')).toBe(0);
    expect(value(samples, 'ringbook_da_published_batch_id')).toBe(value(samples, 'ringbook_committed_batch_id'));
    expect(value(samples, 'ringbook_state_root_seconds_count')).toBeGreaterThan(0);
    expect(value(samples, 'ringbook_ws_connections')).toBe(1);
    expect(value(samples, 'ringbook_ws_subscriptions')).toBe(2);
    expect(value(samples, 'ringbook_ws_messages_total', { direction: 'in' })).toBe(1);
    c.ws.close();
    for (let i = 0; i < 100 && value(samples, 'ringbook_ws_connections') !== 0; i++) {
      await sleep(20);
      samples = parseSamples((await scrape(port)).text);
    }
    expect(value(samples, 'ringbook_ws_connections')).toBe(0);
    expect(value(samples, 'ringbook_ws_subscriptions')).toBe(0);
  });

  it('declares every family issue 16 names, process metrics included, and nothing else answers', async () => {
    const r = await scrape(port);
    const families = familiesOf(r.text);
    for (const [name, type] of Object.entries(RINGBOOK_FAMILIES)) expect(families.get(name), name).toBe(type);
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      expect(families.has(name), name).toBe(true);
    }
    const other = await new Promise<number>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: '/' }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).on('error', reject);
    });
    expect(other).toBe(404);
  });

  it('SIGUSR2 stops request-path recording and starts it again; the scrape works either way', async () => {
    const healthCount = async (): Promise<{ count: number; recording: number | undefined }> => {
      const samples = parseSamples((await scrape(port)).text);
      return {
        count: value(samples, 'ringbook_http_requests_total', { route: 'GET /health', status: '200' }) ?? 0,
        recording: value(samples, 'ringbook_metrics_recording'),
      };
    };
    const waitRecording = async (want: number): Promise<number> => {
      let now = await healthCount();
      for (let i = 0; i < 100 && now.recording !== want; i++) {
        await sleep(20);
        now = await healthCount();
      }
      expect(now.recording).toBe(want);
      return now.count;
    };
    const before = await waitRecording(1);
    s.proc.kill('SIGUSR2');
    expect(await waitRecording(0)).toBe(before);
    for (let i = 0; i < 3; i++) expect((await a.get('/health')).status).toBe(200);
    expect((await healthCount()).count).toBe(before);
    s.proc.kill('SIGUSR2');
    expect(await waitRecording(1)).toBe(before);
    expect((await a.get('/health')).status).toBe(200);
    expect((await healthCount()).count).toBe(before + 1);
    expect(s.output().stdout).toMatch(/"msg":"ringbook: metrics recording off"/);
  });

  it('queries only metrics a scrape has in the Grafana dashboard (docs/grafana-dashboard.json)', async () => {
    const dashboard = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'docs', 'grafana-dashboard.json'), 'utf8')) as {
      panels: { title: string; targets?: { expr: string }[] }[];
    };
    const r = await scrape(port);
    const names = new Set(parseSamples(r.text).map((x) => x.name));
    const queried = new Set<string>();
    for (const p of dashboard.panels) {
      for (const t of p.targets ?? []) {
        // Metric names in a PromQL expression: identifiers not followed by `(` (functions) and not
        // inside braces (label names) or after `by`/`without`.
        const expr = t.expr.replace(/\{[^}]*\}/g, '').replace(/\b(by|without)\s*\([^)]*\)/g, '').replace(/\[[^\]]*\]/g, '');
        for (const m of expr.matchAll(/\b([a-z_][a-z0-9_]*)\b(?!\s*\()/g)) {
          if (/^(sum|rate|increase|histogram_quantile|le|on|ignoring|group_left|group_right|irate|max|min|avg|clamp_min)$/.test(m[1])) continue;
          if (/^\d/.test(m[1])) continue;
          queried.add(m[1]);
        }
      }
    }
    expect(queried.size).toBeGreaterThan(15);
    for (const n of queried) expect(names.has(n), `${n} (queried by the dashboard) is not in a scrape`).toBe(true);
    // And the dashboard shows every ringbook family.
    for (const name of Object.keys(RINGBOOK_FAMILIES)) {
      const used = [...queried].some((q) => q === name || q.startsWith(name + '_'));
      expect(used, `${name} has no panel`).toBe(true);
    }
  });
});

describe('metrics off', () => {
  it('opens no listener and logs no metrics line with metrics.enabled false', async () => {
    const s = await startServer({ config: { metrics: { enabled: false } } });
    try {
      expect(s.output().stdout).not.toMatch(/metrics on http/);
      expect((await api(s.url).get('/health')).status).toBe(200);
    } finally {
      expect((await s.stop()).code).toBe(0);
    }
  });
});
