// The pooled stage stamps of signed requests (src/gateway/stage_timings.ts) on the real server:
// every way a stamped request ends gives its stamps back exactly once (GET /admin/state
// `stage_stamps`: `outstanding` back to 0 when idle, `given_back_twice` 0), and a stamp object is
// never shared by two requests (each kept stage row is one request's, in pipeline order).
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseStageFile, STAGE_ROW_F64, STAGE_STAMPS, STAGES } from '../../src/gateway/stage_timings.js';
import { adminState, api, caughtUpState, deposit, startServer, Wallet, type StartedServer } from './harness.js';

interface StampCounts {
  outstanding: number;
  pooled: number;
  given_back_twice: number;
}

async function stampCounts(s: StartedServer): Promise<StampCounts> {
  return (await adminState(s)).stage_stamps as StampCounts;
}

/**
 * The counts once nothing is in flight: stamps the answer gives back go back before the client
 * reads it, but an aborted request's may still be in its verify task (bounded: 200 polls of 25 ms).
 */
async function idleCounts(s: StartedServer): Promise<StampCounts> {
  let c = await stampCounts(s);
  for (let i = 0; i < 200 && c.outstanding !== 0; i++) {
    await new Promise((r) => setTimeout(r, 25));
    c = await stampCounts(s);
  }
  return c;
}

const servers: StartedServer[] = [];
afterAll(async () => {
  // Every server is stopped before the check, so one unclean exit does not leave others running.
  const codes: (number | null)[] = [];
  for (const s of servers) codes.push((await s.stop()).code);
  expect(codes).toEqual(servers.map(() => 0));
});

async function server(config: Record<string, unknown>): Promise<StartedServer> {
  const s = await startServer({ config });
  servers.push(s);
  return s;
}

const order = (w: Wallet, i: number): Record<string, unknown> =>
  w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000 + (i % 50) * 10_000, quantity: 100_000 });

describe('stage stamps given back on every way a signed request ends', () => {
  it('a request refused at the request ring (503 OVERLOADED) gives its stamps back', async () => {
    // Two slots: a deposit (one record) fits, a signed order (its record and two consent slots)
    // never does, so every order is refused at the ring.
    const s = await server({ limits: { request_ring_slots: 2, batch_requests_max: 2 } });
    const w = Wallet.random();
    expect((await deposit(s, w.address, 'USDC', '100000')).status).toBe(200);
    const before = await idleCounts(s);
    expect(before.outstanding).toBe(0);
    const a = api(s.url);
    const REFUSED = 20;
    for (let i = 0; i < REFUSED; i++) {
      const r = await a.post('/orders', order(w, i));
      expect(r.status).toBe(503);
      expect(r.body.error).toBe('OVERLOADED');
      expect(r.body.message).toMatch(/request ring full/);
    }
    const after = await stampCounts(s);
    // Each refused order gave its stamps back (before: each was left to the GC, 20 outstanding).
    expect(after.outstanding).toBe(0);
    expect(after.given_back_twice).toBe(0);
    expect(after.pooled).toBeGreaterThanOrEqual(1);
  });

  it('a request refused by the DA backlog (503 OVERLOADED) gives its stamps back', async () => {
    // With the bound at 1, a write right after a commit meets a batch still waiting for its root
    // (test/server/da_backlog.test.ts).
    const s = await server({ limits: { da_backlog_batches_max: 1 } });
    const w = Wallet.random();
    // The deposit first waits for the DA thread's roots of the start's batches (as in
    // da_backlog.test.ts): the server may listen before they are all rooted.
    await caughtUpState(s);
    expect((await deposit(s, w.address, 'USDC', '1000000')).status).toBe(200);
    const a = api(s.url);
    let refused = 0;
    for (let i = 0; i < 40; i++) {
      const r = await a.post('/orders', order(w, i));
      if (r.status === 503) refused++;
      else expect(r.status).toBe(200);
    }
    expect(refused).toBeGreaterThan(0);
    const after = await idleCounts(s);
    expect(after.outstanding).toBe(0);
    expect(after.given_back_twice).toBe(0);
  });
});

/** Sends a signed POST /orders on a raw socket and closes it as soon as the body is written. */
function sendAndAbort(port: number, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`POST /orders HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`, () => {
        socket.destroy();
        resolve();
      });
    });
    socket.once('error', reject);
  });
}

describe('a stamp object belongs to one request at a time', () => {
  it('under a mix of answered, refused and aborted requests: all given back once, every row one request\'s', async () => {
    const s = await server({ diagnostics: { stage_timings: true } });
    const a = api(s.url);
    const wallets = Array.from({ length: 8 }, () => Wallet.random());
    for (const w of wallets) expect((await deposit(s, w.address, 'USDC', '1000000')).status).toBe(200);
    const answered: string[] = [];
    let refused = 0;
    let aborted = 0;
    // Rounds of requests in flight at once, so each round reuses the stamps the one before gave
    // back: answered orders, bad signatures (refused after the verify stage wrote their stamps),
    // bad bodies, and orders whose client went away while they were verified or matched.
    for (let round = 0; round < 6; round++) {
      const jobs: Promise<void>[] = [];
      wallets.forEach((w, k) => {
        const i = round * wallets.length + k;
        const kind = (round + k) % 4;
        if (kind === 0 || kind === 1) {
          jobs.push(a.post('/orders', order(w, i)).then((r) => {
            expect(r.status).toBe(200);
            answered.push(r.headers['x-request-id']);
          }));
        } else if (kind === 2) {
          const bad = w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100_000 }, { signer: () => '0x' + '11'.repeat(65) });
          jobs.push(a.post('/orders', bad).then((r) => {
            expect(r.status).toBe(401);
            refused++;
          }));
          jobs.push(a.post('/orders', '{"market_id":').then((r) => {
            expect(r.status).toBe(400);
            refused++;
          }));
        } else {
          jobs.push(sendAndAbort(s.port, JSON.stringify(order(w, i))).then(() => {
            aborted++;
          }));
        }
      });
      await Promise.all(jobs);
    }
    expect(answered.length).toBe(24);
    expect(refused).toBe(24);
    expect(aborted).toBe(12);
    const counts = await idleCounts(s);
    expect(counts.outstanding, 'every stamped request gave its stamps back').toBe(0);
    expect(counts.given_back_twice, 'no stamps given back twice').toBe(0);

    // The rows: one per request that reached its commit (the answered ones, and aborted ones that
    // got that far), each with its own request number, its stamps in pipeline order.
    const exited = new Promise<number | null>((resolve) => s.proc.once('exit', (code) => resolve(code)));
    s.proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    const rows = parseStageFile(fs.readFileSync(path.join(s.data_dir, 'stage_timings.f64')));
    const count = rows.length / STAGE_ROW_F64;
    expect(count).toBeGreaterThanOrEqual(answered.length);
    expect(count).toBeLessThanOrEqual(answered.length + aborted);
    const numbers = new Set<number>();
    for (let at = 0; at < rows.length; at += STAGE_ROW_F64) {
      numbers.add(rows[at + STAGE_STAMPS]);
      for (let k = 1; k < STAGE_STAMPS; k++) {
        // Three threads' clocks (same epoch): 1 ms of skew allowed, as stage_timings.test.ts does.
        expect(rows[at + k] - rows[at + k - 1], `stage ${STAGES[k - 1]}`).toBeGreaterThan(-1);
      }
    }
    expect(numbers.size, 'one row per request').toBe(count);
    for (const id of answered) expect(numbers.has(parseInt(id.split('-')[1], 36)), `row of ${id}`).toBe(true);
  });
});
