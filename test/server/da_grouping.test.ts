// The DA thread's hand-overs at light load (issue 11, branch h11l): the front posts the committed
// batches to the DA worker at most once per DA_POST_INTERVAL_MS (one message carries every batch
// committed meanwhile) and the worker commits its DA store at most once per message. What must not
// change: every journal batch still gets its own published root, each batch's prev_state_root is
// the root before it, and `ringbook verify` agrees on all of them.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DA_POST_INTERVAL_MS } from '../../src/da/da_thread.js';
import { adminState, caughtUpState, deposit, runVerifier, Wallet, type Api, type StartedServer } from './harness.js';
import { ok } from './checks.js';
import { serverPerFile } from './per_file.js';

let s: StartedServer;
let a: Api;

serverPerFile((started, client) => {
  s = started;
  a = client;
});

/**
 * The grouping the DA hand-over is meant to give at light load: at most one message per this many
 * ms (DA_POST_INTERVAL_MS is 50; it was 5, which posted these sequential batches ~one each).
 */
const GROUPED_BY_MS = 50;
/** Orders sent one after another: each is answered before the next, so each is its own batch. */
const ORDERS = 40;
const ETH_BID = { market_id: 'ETH-USDC', side: 'bid', price: 1_900_000_000, quantity: 100_000 } as const;

describe('DA hand-overs grouped by time', () => {
  it('one message per interval at most, one store commit per message at most, a root per batch, and verify agrees', async () => {
    const w = Wallet.random();
    ok(await deposit(s, w.address, 'USDC', '100000'));
    const before = await caughtUpState(s);
    expect(before.da_thread).not.toBeNull();
    const t0 = Date.now();
    for (let i = 0; i < ORDERS; i++) ok(await a.post('/orders', w.order(ETH_BID)));
    const sending_ms = Date.now() - t0;
    const after = await caughtUpState(s);
    const batches = Number(after.batch_id) - Number(before.batch_id);
    expect(batches).toBeGreaterThanOrEqual(ORDERS);
    const messages = after.da_thread.messages_posted - before.da_thread.messages_posted;
    const commits = after.da_thread.store_commits - before.da_thread.store_commits;
    // A message is posted DA_POST_INTERVAL_MS after the first batch it carries, and the next one
    // is scheduled only after it: the k-th goes at least k intervals after t0 and the last one at
    // most an interval (plus a late timer) after the last answer, so at most ceil(sending / 50) + 1
    // messages; one more for a timer that fires very late on a loaded machine. At 5 ms these
    // sequential one-request batches went ~one message each (~40).
    expect(messages).toBeGreaterThan(0);
    expect(DA_POST_INTERVAL_MS).toBeGreaterThanOrEqual(GROUPED_BY_MS);
    expect(messages, `${messages} messages for ${batches} batches in ${sending_ms} ms`).toBeLessThanOrEqual(Math.ceil(sending_ms / GROUPED_BY_MS) + 2);
    expect(commits).toBeGreaterThan(0);
    expect(commits).toBeLessThanOrEqual(messages);

    // Every batch is published on its own, chained to the one before it.
    let prev: string | null = null;
    for (let id = Number(before.batch_id); id <= Number(after.batch_id); id++) {
      const b = ok(await a.get(`/da/batches/${id}`));
      expect(Number(b.header.batch_id)).toBe(id);
      if (prev !== null) expect(b.header.prev_state_root).toBe(prev);
      prev = b.header.state_root;
    }
    expect(prev).toBe(after.state_root);

    const v = await runVerifier(s.url, path.join(s.data_dir, 'test-config.json'));
    expect(v.code, v.stderr).toBe(0);
    expect(JSON.parse(v.stdout.trim().split('\n').pop()!)).toMatchObject({ verify: 'ok' });
    // Nothing more was posted while idle (the verifier only reads).
    expect((await adminState(s)).da_thread.messages_posted).toBe(after.da_thread.messages_posted);
  }, 60_000);
});
