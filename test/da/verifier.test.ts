// The verifier against a real server (child process): real signed orders with fills, then the
// CLI re-executes every published batch and agrees; tampered copies of published batches
// (inputs, fills, dropped or added requests, headers) are each detected as fraud, honest batches
// never are; every fill's DA proof verifies with OpenZeppelin's StandardMerkleTree, mutated ones
// do not; a restart re-derives the same roots without republishing.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { engineConfigOf } from '../../src/config/read.js';
import { FILL_LEAF_TYPES, FillsTree, fillLeafValues } from '../../src/da/fills_tree.js';
import { batchFromJson, RECORD_BYTES, type PublishedBatch } from '../../src/da/published.js';
import { Verifier, type BatchVerdict } from '../../src/da/verifier.js';
import type { EngineConfig } from '../../src/engine/api.js';
import { RequestKind } from '../../src/engine/types.js';
import { adminHeaders, api, caughtUpState, deposit, REPO_ROOT, runVerifier as runHarnessVerifier, startServer, Wallet, type Api, type StartedServer } from '../server/harness.js';
import { fail, ok } from '../server/checks.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const VERIFY_MAIN = path.join(REPO_ROOT, 'dist', 'src', 'cli', 'verify.js');

let s: StartedServer;
let a: Api;
let config_file: string;
let engine_config: EngineConfig;
let batches: PublishedBatch[] = [];
/** order id -> fill ids (from the order answers). */
const order_fills = new Map<number, number[]>();
let unfilled_order = 0;
// Registered before the afterAll that stops the server, so it runs after it (vitest: last registered first).
const tmp = tempDirsPerFile('ringbook-verify-');

function runVerifier(url: string, extra: string[] = []): ReturnType<typeof runHarnessVerifier> {
  return runHarnessVerifier(url, config_file, extra);
}

async function fetchBatches(url: string): Promise<PublishedBatch[]> {
  const out: PublishedBatch[] = [];
  for (;;) {
    const page = ok(await api(url).get(`/da/batches?from=${out.length + 1}&limit=7`));
    if (page.length === 0) return out;
    for (const b of page) out.push(batchFromJson(b));
  }
}

/** The DA worker publishes a little after the answers: wait until it has the last batch. */
const waitForDa = (server: StartedServer): Promise<any> => caughtUpState(server);

function noteFills(order: any): void {
  for (const f of order.fills ?? []) {
    const list = order_fills.get(order.order_id) ?? [];
    list.push(f.fill_id);
    order_fills.set(order.order_id, list);
  }
}

beforeAll(async () => {
  s = await startServer();
  a = api(s.url);
  config_file = path.join(s.data_dir, 'test-config.json');
  engine_config = engineConfigOf(loadConfig({ RINGBOOK_CONFIG: config_file }));
  const maker = Wallet.random();
  const taker = Wallet.random();
  const other = Wallet.random();
  ok(await deposit(s, maker.address, 'ETH', '10'));
  ok(await deposit(s, maker.address, 'USDC', '10000'));
  ok(await deposit(s, maker.address, 'BTC', '1'));
  ok(await deposit(s, taker.address, 'USDC', '100000'));
  ok(await deposit(s, taker.address, 'ETH', '1'));
  ok(await deposit(s, other.address, 'USDC', '1000'));
  ok(await a.put(`/admin/accounts/${maker.address}/credit`, { credit_limit: 500_000_000_000, auto_cancel_ratio: 0.95 }, adminHeaders(s)));
  // Resting asks at three prices (some concurrently: several requests per batch).
  const asks = await Promise.all([0, 1, 2, 3, 10].map((i) => a.post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'ask', price: 2_000_000_000 + i * 10_000, quantity: 300 }))));
  const ask_ids = asks.map((r) => ok(r).order_id as number);
  // Takers: a full fill, a sweep over two levels, and a partial fill that rests.
  const t1 = ok(await a.post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_000, quantity: 300 })));
  noteFills(t1);
  const t2 = ok(await a.post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_020_000, quantity: 500, time_in_force: 'ioc' })));
  noteFills(t2);
  const t3 = ok(await a.post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_030_000, quantity: 400 })));
  noteFills(t3);
  unfilled_order = ok(await a.post('/orders', other.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100 }))).order_id;
  ok(await a.post('/orders/cancel', maker.cancel({ order_id: ask_ids[4] })));
  ok(await a.post('/withdrawals', other.withdraw('USDC', '1000000')));
  ok(await a.put('/admin/fees', { maker_fee_bps: -2, taker_fee_bps: 6 }, adminHeaders(s)));
  ok(await a.post('/admin/markets/BTC-USDC/pause', {}, adminHeaders(s)));
  ok(await a.post('/admin/markets/BTC-USDC/resume', {}, adminHeaders(s)));
  // A burst of concurrent crossing orders: multi-request batches with several fills each.
  const btc_asks = await Promise.all([0, 1, 2, 3, 4].map((i) => a.post('/orders', maker.order({ market_id: 'BTC-USDC', side: 'ask', price: 30_000_000_000 + i * 100_000, quantity: 10 }))));
  for (const r of btc_asks) ok(r);
  const burst = await Promise.all([0, 1, 2].map(() => a.post('/orders', taker.order({ market_id: 'BTC-USDC', side: 'bid', price: 30_000_500_000, quantity: 10 }))));
  for (const r of burst) noteFills(ok(r));
  await waitForDa(s);
  batches = await fetchBatches(s.url);
}, 120_000);

afterAll(async () => {
  const r = await s?.stop();
  expect(r?.code).toBe(0);
});

describe('published batches', () => {
  it('are contiguous from 1, chained by prev_state_root, and carry fills', () => {
    expect(batches.length).toBeGreaterThan(10);
    batches.forEach((b, i) => {
      expect(b.header.batch_id).toBe(i + 1);
      if (i > 0) expect(b.header.prev_state_root).toBe(batches[i - 1].header.state_root);
      expect(b.inputs_hex.length % (RECORD_BYTES * 2)).toBe(0);
      expect('0x' + Buffer.from(keccak_256(Buffer.from(b.inputs_hex, 'hex'))).toString('hex')).toBe(b.header.input_hash);
      expect(FillsTree.build(b.fills).root()).toBe(b.header.fills_root);
    });
    expect(batches.reduce((n, b) => n + b.fills.length, 0)).toBeGreaterThanOrEqual(6);
    expect(batches.some((b) => b.inputs_hex.length / (RECORD_BYTES * 2) > 1)).toBe(true);
  });

  it('GET /da/batches/:id answers one batch, NOT_FOUND beyond the last, bounded pages', async () => {
    const one = ok(await a.get('/da/batches/2'));
    expect(one.header.batch_id).toBe('2');
    expect(batchFromJson(one)).toEqual(batches[1]);
    fail(await a.get(`/da/batches/${batches.length + 50}`), 404, 'NOT_FOUND');
    fail(await a.get('/da/batches/0'), 400, 'INVALID_REQUEST');
    fail(await a.get('/da/batches/abc'), 400, 'INVALID_REQUEST');
    fail(await a.get('/da/batches?limit=101'), 400, 'INVALID_REQUEST');
    expect(ok(await a.get('/da/batches?from=3&limit=2')).map((b: any) => b.header.batch_id)).toEqual(['3', '4']);
    expect(ok(await a.get(`/da/batches?from=${batches.length + 1}`))).toEqual([]);
  });

  it('the admin state root is the last published state root', async () => {
    const st = ok(await a.get('/admin/state', adminHeaders(s)));
    const last = batches[batches.length - 1].header;
    expect(st.state_root_batch_id).toBe(String(last.batch_id));
    const again = await fetchBatches(s.url);
    expect(again.length, `${s.output().stderr}\n${JSON.stringify(again.slice(batches.length))}`).toBe(batches.length);
    // Nothing was sent since the batches were fetched.
    expect(st.batch_id).toBe(String(last.batch_id));
    expect(st.state_root).toBe(last.state_root);
  });
});

describe('verifier CLI against the real server', () => {
  it('re-executes every batch and agrees (exit 0)', async () => {
    const out = tmp();
    const r = await runVerifier(s.url, ['--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout.trim().split('\n').pop()!);
    expect(summary).toMatchObject({ verify: 'ok', batches: batches.length, checked: batches.length, state_root: batches[batches.length - 1].header.state_root });
    expect(r.stderr).toMatch(/OK: \d+ batches re-executed/);
    expect(fs.readdirSync(out)).toEqual([]);
  });

  it('--from N re-executes earlier batches without checking them', async () => {
    const r = await runVerifier(s.url, ['--from', '5', '--out', tmp()]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ verify: 'ok', batches: batches.length, checked: batches.length - 4 });
  });

  it('a config that is not the server\'s is an error (exit 1), not fraud', async () => {
    const other = path.join(tmp(), 'other.json');
    fs.writeFileSync(other, JSON.stringify({ fees: { maker_fee_bps: 0, taker_fee_bps: 7 } }));
    const p = spawn(process.execPath, [VERIFY_MAIN, '--url', s.url, '--config', other, '--out', tmp()], { cwd: REPO_ROOT });
    let stderr = '';
    p.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((r) => p.on('exit', r));
    expect(code).toBe(1);
    expect(stderr).toMatch(/genesis root/);
  });

  it('detects a tampered batch served by a proxy (exit 2, fraud proof file)', async () => {
    const victim = batches.find((b) => b.fills.length > 0)!;
    const id = victim.header.batch_id;
    const proxy = http.createServer((req, res) => {
      http.get(s.url + req.url, (up) => {
        const chunks: Buffer[] = [];
        up.on('data', (c) => chunks.push(c));
        up.on('end', () => {
          let body = Buffer.concat(chunks).toString('utf8');
          const env = JSON.parse(body);
          const list = Array.isArray(env.data) ? env.data : [env.data];
          for (const b of list) {
            if (b && b.header && b.header.batch_id === String(id)) b.fills[0].quantity += 1;
          }
          body = JSON.stringify(env);
          res.writeHead(up.statusCode ?? 500, { 'content-type': 'application/json' });
          res.end(body);
        });
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const port = (proxy.address() as { port: number }).port;
    const out = tmp();
    try {
      const r = await runVerifier(`http://127.0.0.1:${port}`, ['--out', out]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`FRAUD in batch ${id}`));
      const file = path.join(out, `fraud-batch-${id}.json`);
      expect(JSON.parse(r.stdout.trim())).toMatchObject({ verify: 'fraud', fraud_batch: id, proof: file });
      const proof = JSON.parse(fs.readFileSync(file, 'utf8'));
      expect(proof).toMatchObject({
        type: 'ringbook-fraud-proof', batch_id: id, inputs_hex: victim.inputs_hex,
        expected: { state_root: victim.header.state_root, fills_root: victim.header.fills_root, input_hash: victim.header.input_hash },
        found: { state_root: victim.header.state_root, fills_root: victim.header.fills_root },
        first_differing_fill: { index: 0 },
      });
      expect(proof.first_differing_fill.found[9]).toBe(String(victim.fills[0].quantity + 1));
      expect(proof.first_differing_fill.expected[9]).toBe(String(victim.fills[0].quantity));
    } finally {
      proxy.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Tampering through the library API

/** Verifies `bs` in order; returns the verdicts up to and including the first failure. */
function verifyAll(bs: PublishedBatch[]): BatchVerdict[] {
  const v = new Verifier(engine_config, { out_dir: null, log: () => undefined });
  const out: BatchVerdict[] = [];
  for (const b of bs) {
    const verdict = v.verify(b);
    out.push(verdict);
    if (!verdict.ok) break;
  }
  return out;
}

function clone(b: PublishedBatch): PublishedBatch {
  return structuredClone(b);
}

function records(b: PublishedBatch): Buffer[] {
  const bytes = Buffer.from(b.inputs_hex, 'hex');
  const out: Buffer[] = [];
  for (let o = 0; o < bytes.length; o += RECORD_BYTES) out.push(Buffer.from(bytes.subarray(o, o + RECORD_BYTES)));
  return out;
}

const kindOf = (rec: Buffer): number => rec.readInt32LE(18 * 4);

function setRecords(b: PublishedBatch, recs: Buffer[], rehash: boolean): void {
  const bytes = Buffer.concat(recs);
  b.inputs_hex = bytes.toString('hex');
  if (rehash) b.header.input_hash = '0x' + Buffer.from(keccak_256(bytes)).toString('hex');
}

/** Runs the whole sequence with batch `index` replaced; expects fraud exactly there. */
function expectFraudAt(index: number, tampered: PublishedBatch): BatchVerdict {
  const seq = batches.slice();
  seq[index] = tampered;
  const verdicts = verifyAll(seq);
  expect(verdicts.length).toBe(index + 1);
  for (const v of verdicts.slice(0, index)) expect(v.ok).toBe(true);
  const last = verdicts[index];
  expect(last.ok).toBe(false);
  expect(last.error).toBeUndefined();
  expect(last.fraud?.batch_id).toBe(index + 1);
  return last;
}

describe('verifier library: tampering is fraud, honesty is not', () => {
  it('honest batches all verify', () => {
    const verdicts = verifyAll(batches);
    expect(verdicts.length).toBe(batches.length);
    expect(verdicts.every((v) => v.ok)).toBe(true);
  });

  const placeBatch = (): number => batches.findIndex((b) => b.fills.length > 0 && records(b).some((r) => kindOf(r) === RequestKind.PLACE));

  it('altered inputs (header kept): input hash and re-execution disagree', () => {
    const i = placeBatch();
    const t = clone(batches[i]);
    const recs = records(t);
    const r = recs.find((x) => kindOf(x) === RequestKind.PLACE)!;
    r.writeDoubleLE(r.readDoubleLE(2 * 8) + 10_000_000, 2 * 8); // another price
    setRecords(t, recs, false);
    const v = expectFraudAt(i, t);
    expect(v.fraud!.reasons.join('\n')).toMatch(/inputs hash to/);
  });

  it('altered inputs with a recomputed input hash: re-execution disagrees, first differing leaf named', () => {
    const i = placeBatch();
    const t = clone(batches[i]);
    const recs = records(t);
    const r = recs.find((x) => kindOf(x) === RequestKind.PLACE)!;
    // Twice the quantity: it fills the same and rests the rest. (A higher limit price alone would
    // not do: a fully filled order leaves no trace of its limit in the state, so that tamper is
    // indistinguishable from an honest batch once the input hash is recomputed.)
    r.writeDoubleLE(r.readDoubleLE(3 * 8) * 2, 3 * 8);
    setRecords(t, recs, true);
    const v = expectFraudAt(i, t);
    expect(v.fraud!.reasons.join('\n')).not.toMatch(/inputs hash to/);
    expect(v.fraud!.expected.state_root).not.toBe(t.header.state_root);
    expect(v.fraud!.first_differing_leaf).not.toBeNull();
    expect(v.fraud!.published_diff_gives_claimed_root).toBe(true);
  });

  it('altered fills (header kept, or fills root recomputed)', () => {
    const i = batches.findIndex((b) => b.fills.length > 0);
    const t = clone(batches[i]);
    t.fills[0].price += 10_000;
    const v = expectFraudAt(i, t);
    expect(v.fraud!.reasons.join('\n')).toMatch(/published fills/);
    expect(v.fraud!.first_differing_fill?.index).toBe(0);
    const t2 = clone(t);
    t2.header.fills_root = FillsTree.build(t2.fills).root();
    const v2 = expectFraudAt(i, t2);
    expect(v2.fraud!.reasons.join('\n')).toMatch(/re-execution gives fills_root/);
    const t3 = clone(batches[i]);
    t3.fills = t3.fills.slice(1);
    expectFraudAt(i, t3);
  });

  it('a dropped request (hash recomputed)', () => {
    const i = placeBatch();
    const t = clone(batches[i]);
    const recs = records(t).filter((_, k, all) => k !== all.findIndex((x) => kindOf(x) === RequestKind.PLACE));
    setRecords(t, recs, true);
    const v = expectFraudAt(i, t);
    expect(v.fraud!.input_count).toBe(records(batches[i]).length - 1);
  });

  it('an added request (a copied deposit, hash recomputed)', () => {
    const deposit_rec = batches.flatMap(records).find((x) => kindOf(x) === RequestKind.DEPOSIT)!;
    const i = batches.length - 1;
    const t = clone(batches[i]);
    setRecords(t, [...records(t), deposit_rec], true);
    const v = expectFraudAt(i, t);
    expect(v.fraud!.first_differing_leaf?.id).toMatch(/^balance\//);
  });

  it('a forged header root, a broken chain, a wrong timestamp-free header field', () => {
    const t = clone(batches[3]);
    t.header.state_root = '0x' + '77'.repeat(32);
    expectFraudAt(3, t);
    const t2 = clone(batches[4]);
    t2.header.prev_state_root = '0x' + '66'.repeat(32);
    expect(expectFraudAt(4, t2).fraud!.reasons.join('\n')).toMatch(/prev_state_root/);
    const t3 = clone(batches[2]);
    t3.inputs_hex = t3.inputs_hex.slice(0, -2);
    expect(expectFraudAt(2, t3).fraud!.reasons.join('\n')).toMatch(/not a whole number/);
  });
});

describe('DA proofs of fills', () => {
  it('every fill of every order proves against its batch fills root with StandardMerkleTree', async () => {
    let proven = 0;
    const fill_batch = new Map<number, PublishedBatch>();
    for (const b of batches) for (const f of b.fills) fill_batch.set(f.fill_id, b);
    const orders = new Set<number>();
    for (const b of batches) for (const f of b.fills) orders.add(f.taker_order_id).add(f.maker_order_id);
    for (const order_id of orders) {
      const fills = batches.flatMap((b) => b.fills).filter((f) => f.taker_order_id === order_id || f.maker_order_id === order_id);
      const latest = ok(await a.get(`/orders/${order_id}/da-proof`));
      expect(latest.fill_id).toBe(Math.max(...fills.map((f) => f.fill_id)));
      for (const f of fills) {
        const p = ok(await a.get(`/orders/${order_id}/da-proof?fill_id=${f.fill_id}`));
        const b = fill_batch.get(f.fill_id)!;
        expect(p).toEqual({
          order_id, batch_id: String(b.header.batch_id), merkle_root: b.header.fills_root, merkle_proof: expect.any(Array),
          fill_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/), fill_id: f.fill_id, leaf: fillLeafValues(f), leaf_types: [...FILL_LEAF_TYPES],
        });
        expect(StandardMerkleTree.verify(p.merkle_root, [...FILL_LEAF_TYPES], p.leaf, p.merkle_proof)).toBe(true);
        expect(p.fill_hash).toBe(StandardMerkleTree.of([p.leaf], [...FILL_LEAF_TYPES]).leafHash(p.leaf));
        // Mutations: another value in the leaf, a flipped proof byte, a dropped proof step.
        const leaf2 = p.leaf.slice();
        leaf2[9] = String(BigInt(leaf2[9]) + 1n);
        expect(StandardMerkleTree.verify(p.merkle_root, [...FILL_LEAF_TYPES], leaf2, p.merkle_proof)).toBe(false);
        if (p.merkle_proof.length > 0) {
          const flipped = p.merkle_proof.slice();
          flipped[0] = flipped[0].slice(0, -1) + (flipped[0].endsWith('0') ? '1' : '0');
          expect(StandardMerkleTree.verify(p.merkle_root, [...FILL_LEAF_TYPES], p.leaf, flipped)).toBe(false);
          expect(StandardMerkleTree.verify(p.merkle_root, [...FILL_LEAF_TYPES], p.leaf, p.merkle_proof.slice(1))).toBe(false);
        }
        const other_root = '0x' + 'ab'.repeat(32);
        expect(StandardMerkleTree.verify(other_root, [...FILL_LEAF_TYPES], p.leaf, p.merkle_proof)).toBe(false);
        proven++;
      }
    }
    expect(proven).toBeGreaterThanOrEqual(12);
    // The fills the takers were answered with are among them.
    for (const [order_id, fill_ids] of order_fills) {
      for (const fill_id of fill_ids) ok(await a.get(`/orders/${order_id}/da-proof?fill_id=${fill_id}`));
    }
  });

  it('NOT_FOUND for an order without fills, an unknown order or a fill of another order', async () => {
    fail(await a.get(`/orders/${unfilled_order}/da-proof`), 404, 'NOT_FOUND');
    fail(await a.get('/orders/999999999/da-proof'), 404, 'NOT_FOUND');
    const [order_id, fill_ids] = [...order_fills][0];
    const foreign = batches.flatMap((b) => b.fills).find((f) => f.taker_order_id !== order_id && f.maker_order_id !== order_id && !fill_ids.includes(f.fill_id))!;
    fail(await a.get(`/orders/${order_id}/da-proof?fill_id=${foreign.fill_id}`), 404, 'NOT_FOUND');
    fail(await a.get('/orders/abc/da-proof'), 400, 'INVALID_REQUEST');
  });
});

describe('restart', () => {
  it('re-derives the same roots from the journal without republishing, then publishes on', async () => {
    const data_dir = tmp();
    const first = await startServer({ env: { RINGBOOK_DATA_DIR: data_dir } });
    const w = Wallet.random();
    const m = Wallet.random();
    ok(await deposit(first, w.address, 'USDC', '5000'));
    ok(await deposit(first, m.address, 'ETH', '1'));
    ok(await api(first.url).post('/orders', m.order({ market_id: 'ETH-USDC', side: 'ask', price: 2_000_000_000, quantity: 200 })));
    ok(await api(first.url).post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_000, quantity: 100 })));
    await waitForDa(first);
    const before = await fetchBatches(first.url);
    const root_before = ok(await api(first.url).get('/admin/state', adminHeaders(first))).state_root;
    expect((await first.stop()).code).toBe(0);

    const second = await startServer({ env: { RINGBOOK_DATA_DIR: data_dir } });
    try {
      expect((await waitForDa(second)).state_root).toBe(root_before);
      expect(await fetchBatches(second.url)).toEqual(before);
      ok(await api(second.url).post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_000, quantity: 100 })));
      await waitForDa(second);
      const after = await fetchBatches(second.url);
      expect(after.length).toBe(before.length + 1);
      expect(after[after.length - 1].header.prev_state_root).toBe(root_before);
      expect(after[after.length - 1].fills.length).toBe(1);
      const r = await runVerifier(second.url, ['--out', tmp()]);
      expect(r.code, r.stderr).toBe(0);
      expect(second.output().stderr).not.toMatch(/DA/);
    } finally {
      expect((await second.stop()).code).toBe(0);
    }
  });
});
