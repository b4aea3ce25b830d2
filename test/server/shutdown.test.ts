// Clean stop under load: ~200 signed orders fired concurrently, SIGTERM while they are in flight.
// Every request that got a response got a complete, well-formed one; the process exits 0.
import { describe, expect, it } from 'vitest';
import { api, deposit, request, startServer, Wallet, type ApiResponse } from './harness.js';
import { ok, REQUEST_ID } from './checks.js';

const WALLETS = 10;
const PER_WALLET = 20;

interface Outcome {
  response?: ApiResponse;
  error?: string;
}

describe('SIGTERM during a burst of orders', () => {
  let outcomes: Outcome[] = [];
  let summary = '';

  it('exits 0 and every request that got a response got a complete, well-formed one', async () => {
    const s = await startServer();
    const wallets = Array.from({ length: WALLETS }, () => Wallet.random());
    for (const w of wallets) {
      ok(await deposit(s, w.address, 'USDC', '100000'));
      ok(await deposit(s, w.address, 'ETH', '100'));
    }
    // Pre-sign everything so the burst is only I/O: crossing bids and asks around 2000.
    const bodies: string[] = [];
    for (let i = 0; i < PER_WALLET; i++) {
      for (const [k, w] of wallets.entries()) {
        const side = (i + k) % 2 === 0 ? 'bid' : 'ask';
        const price = 2_000_000_000 + (side === 'bid' ? 1 : -1) * ((i % 5) * 10_000);
        bodies.push(JSON.stringify(w.order({ market_id: 'ETH-USDC', side, price, quantity: 100 * (1 + (i % 3)), time_in_force: i % 4 === 0 ? 'ioc' : 'gtc' }, { form: i % 2 === 0 ? 'json' : 'colon' })));
      }
    }
    outcomes = new Array(bodies.length);
    let first_answer: () => void = () => {};
    const answered = new Promise<void>((resolve) => {
      first_answer = resolve;
    });
    const all = bodies.map((b, i) =>
      request('POST', s.url + '/orders', b, { agent: false }).then(
        (response) => {
          outcomes[i] = { response };
          first_answer();
        },
        (e: unknown) => {
          outcomes[i] = { error: (e as NodeJS.ErrnoException).code ?? String(e) };
        },
      ),
    );
    // SIGTERM as soon as the server has answered anything: the rest of the burst is in flight.
    await Promise.race([answered, new Promise((r) => setTimeout(r, 10_000))]);
    const stopped = s.stop('SIGTERM');
    await Promise.all(all);
    const result = await stopped;

    const counts: Record<string, number> = {};
    for (const o of outcomes) {
      const key = o.response ? `${o.response.status} ${o.response.body?.error ?? 'ok'}` : `no response (${o.error})`;
      counts[key] = (counts[key] ?? 0) + 1;
    }
    summary = JSON.stringify(counts);
    console.log(`shutdown burst: ${summary}`);
    expect(result.code, `exit code; stderr:\n${result.stderr}`).toBe(0);
    expect(result.signal).toBeNull();
    expect(result.stdout).toMatch(/stopped cleanly/);
    expect(outcomes.some((o) => o.response), summary).toBe(true);
    for (const o of outcomes) {
      if (!o.response) {
        // Connections refused or reset after the stop are fine; a half-received response is not.
        expect(o.error, summary).not.toBe('response body incomplete');
        continue;
      }
      const r = o.response;
      expect(r.headers['content-type'], summary).toBe('application/json');
      expect(r.headers['x-request-id']).toMatch(REQUEST_ID);
      expect(typeof r.body, `not JSON: ${r.text}`).toBe('object');
      if (r.status === 200) {
        expect(Object.keys(r.body).sort()).toEqual(['data', 'ok']);
        expect(r.body.ok).toBe(true);
        expect(r.body.data.order_id).toEqual(expect.any(Number));
        expect(['open', 'partially_filled', 'filled', 'cancelled']).toContain(r.body.data.status);
        expect(r.body.data.batch_id).toMatch(/^\d+$/);
      } else {
        expect(Object.keys(r.body).sort()).toEqual(['error', 'message', 'ok', 'request_id']);
        expect(r.body.ok).toBe(false);
        expect(r.body.request_id).toBe(r.headers['x-request-id']);
      }
    }
    // After the stop nothing listens any more.
    await expect(api(s.url).get('/health')).rejects.toThrow();
  });

  // Requests received before SIGTERM are finished (signature check, matcher, commit) and
  // answered; only requests arriving on a kept-alive connection after the stop began get
  // 503 SHUTTING_DOWN. Nobody gets a wrong INVALID_SIGNATURE or OVERLOADED.
  it('every answered order is a 200, a 4xx that is not INVALID_SIGNATURE, or 503 SHUTTING_DOWN for late arrivals', () => {
    expect(outcomes.length).toBe(WALLETS * PER_WALLET);
    for (const o of outcomes) {
      if (!o.response) continue;
      const r = o.response;
      if (r.status === 503) {
        expect(r.body.error, `${summary}\n${r.text}`).toBe('SHUTTING_DOWN');
        continue;
      }
      expect(r.status, `${summary}\n${r.text}`).toBeLessThan(500);
      if (r.status !== 200) {
        expect(r.status, `${summary}\n${r.text}`).toBeGreaterThanOrEqual(400);
        expect(r.body.error, `${summary}\n${r.text}`).not.toBe('INVALID_SIGNATURE');
      }
    }
  });
});
