// The real verify pool (one SharedArrayBuffer ring per worker), workers loaded from the compiled dist/src/auth/verify_worker.js
// (the test command compiles with tsc first), plus the packed codec in-thread.
import fs, { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eip191Hash } from '../../src/auth/eip191.js';
import { createRecoverer, type Recoverer } from '../../src/auth/recover.js';
import { addressFromPrivateKey, signHash, signPersonalMessage } from '../../src/auth/sign.js';
import { SIGNERS_PER_CHECK_MAX, verifySignedMessage, type SignedMessage } from '../../src/auth/verify.js';
import { encodePackedBatch, splitTaskAnswer, verifyPackedBatch } from '../../src/auth/verify_codec.js';
import { createVerifyPool, VerifyPool } from '../../src/auth/verify_pool.js';
import { defaultWorkerFile, describeSecp256k1Threads } from '../../src/auth/verify_pool_options.js';
import { hex } from './vectors.js';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const KEYS = ['11', '22', '33', '44'].map((b) => '0x' + b.repeat(32));
const ADDRS = KEYS.map(addressFromPrivateKey);
const BASE_MESSAGES = [
  'ringbook:order:ETH-USDC:bid:2000000000:500000:7',
  '{"market_id":"BTC-USDC","side":"ask","price":1,"quantity":2,"order_type":"limit","time_in_force":"gtc","nonce":3}',
  'ringbook:cancel::mm-quote-1:10',
  'Ringbook Exchange\nNonce: é😀 ünïcödé',
  '',
];

interface Signed {
  key: string;
  address: string;
  message: string;
  sig: Uint8Array;
}

const signed: Signed[] = [];
for (let k = 0; k < KEYS.length; k++) {
  for (let m = 0; m < 10; m++) {
    const message = `${BASE_MESSAGES[m % BASE_MESSAGES.length]}${m >= BASE_MESSAGES.length ? `:${m}` : ''}`;
    signed.push({ key: KEYS[k], address: ADDRS[k], message, sig: signHash(KEYS[k], eip191Hash(message)) });
  }
}

/** ~1000 items, ten kinds interleaved, each with the verdict it must get. */
function mixedBatch(count: number): { items: SignedMessage[]; expected: number[] } {
  const items: SignedMessage[] = [];
  const expected: number[] = [];
  for (let i = 0; i < count; i++) {
    const s = signed[(i * 7) % signed.length];
    const sig = s.sig.slice();
    let item: SignedMessage = { message: s.message, signature_hex: hex(sig), expected_address: s.address };
    let ok = 1;
    switch (i % 10) {
      case 0:
        break;
      case 1: // v as 0/1
        sig[64] -= 27;
        item = { ...item, signature_hex: hex(sig) };
        break;
      case 2: // somebody else's address
        item = { ...item, expected_address: ADDRS[(ADDRS.indexOf(s.address) + 1) % ADDRS.length] };
        ok = 0;
        break;
      case 3: {
        // high-s twin
        const s2 = N - BigInt(hex(sig.subarray(32, 64)));
        sig.set(Buffer.from(s2.toString(16).padStart(64, '0'), 'hex'), 32);
        sig[64] = sig[64] === 27 ? 28 : 27;
        item = { ...item, signature_hex: hex(sig) };
        ok = 0;
        break;
      }
      case 4: // tampered message
        item = { ...item, message: item.message + ' ' };
        ok = 0;
        break;
      case 5: // garbage signature text
        item = { ...item, signature_hex: ['0x', '0x' + 'zz'.repeat(65), hex(sig).slice(0, 100), 'é'.repeat(132)][i % 4] };
        ok = 0;
        break;
      case 6: // address in upper case still matches
        item = { ...item, expected_address: '0x' + s.address.slice(2).toUpperCase() };
        break;
      case 7: // eth_sign: signature over the un-prefixed keccak of the message
        item = { ...item, signature_hex: hex(signHash(s.key, keccak_256(new TextEncoder().encode(s.message)))) };
        ok = 0;
        break;
      case 8: // malformed address
        item = { ...item, expected_address: ['', s.address.slice(2), s.address + '00', '0x' + 'g'.repeat(40)][i % 4] };
        ok = 0;
        break;
      case 9: // wrong types from a hostile caller
        item = [
          { ...item, signature_hex: 5 },
          { ...item, message: null },
          null,
          { ...item, expected_address: ['x'] },
        ][i % 4] as unknown as SignedMessage;
        ok = 0;
        break;
    }
    items.push(item);
    expected.push(ok);
  }
  return { items, expected };
}

describe('packed codec (in-thread)', () => {
  it('round-trips a mixed batch to the same verdicts as verifySignedMessage', () => {
    const { items, expected } = mixedBatch(200);
    const r = createRecoverer();
    const before = performance.timeOrigin + performance.now();
    const { verdicts, start_ms, end_ms } = splitTaskAnswer(verifyPackedBatch(encodePackedBatch(items, 0, items.length), r));
    const after = performance.timeOrigin + performance.now();
    expect(Array.from(verdicts)).toEqual(expected);
    // The task's own times (stage timings): inside the call, start before end.
    expect(before <= start_ms && start_ms <= end_ms && end_ms <= after).toBe(true);
    expect(items.map((it) => (verifySignedMessage(it, r) ? 1 : 0))).toEqual(expected);
  });

  it('encodes a sub-range and an empty range', () => {
    const { items, expected } = mixedBatch(50);
    const r = createRecoverer({ backend: 'noble' });
    expect(Array.from(splitTaskAnswer(verifyPackedBatch(encodePackedBatch(items, 13, 37), r)).verdicts)).toEqual(expected.slice(13, 37));
    expect(splitTaskAnswer(verifyPackedBatch(encodePackedBatch(items, 5, 5), r)).verdicts.length).toBe(0);
  });
});

describe('candidate signers (a user and its agents): one recovery per item', () => {
  const sigHex = (s: Signed): string => hex(s.sig);
  /** A recoverer that counts its recoveries. */
  function counting(): { r: Recoverer; count: () => number } {
    const inner = createRecoverer();
    let n = 0;
    const r: Recoverer = {
      backend: inner.backend,
      library: inner.library,
      recoverAddressInto: (h, sig, out) => (n++, inner.recoverAddressInto(h, sig, out)),
      recoverAddress: (h, sig) => (n++, inner.recoverAddress(h, sig)),
      recoverAddressRowsInto: (rows, count, addresses, ok) => (n += count, inner.recoverAddressRowsInto(rows, count, addresses, ok)),
    };
    return { r, count: () => n };
  }
  const verdictsOf = (items: SignedMessage[], r: Recoverer): number[] =>
    Array.from(splitTaskAnswer(verifyPackedBatch(encodePackedBatch(items, 0, items.length), r)).verdicts);

  it('answers 1 for the expected address, 1 + i for other_addresses[i - 1], 0 for none, with one recovery each', () => {
    const by = (k: number): Signed => signed[10 * k + 3]; // key k's signature of the same message
    const others = [ADDRS[1], ADDRS[2].toUpperCase().replace('0X', '0x'), ADDRS[3]];
    const items: SignedMessage[] = [
      { message: by(0).message, signature_hex: sigHex(by(0)), expected_address: ADDRS[0], other_addresses: others },
      { message: by(2).message, signature_hex: sigHex(by(2)), expected_address: ADDRS[0], other_addresses: others },
      { message: by(3).message, signature_hex: sigHex(by(3)), expected_address: ADDRS[0], other_addresses: others },
      { message: by(3).message, signature_hex: sigHex(by(3)), expected_address: ADDRS[0], other_addresses: others.slice(0, 2) },
      { message: by(3).message + 'x', signature_hex: sigHex(by(3)), expected_address: ADDRS[0], other_addresses: others },
      { message: by(1).message, signature_hex: sigHex(by(1)), expected_address: ADDRS[0] }, // no candidates: as before
    ];
    const { r, count } = counting();
    expect(verdictsOf(items, r)).toEqual([1, 3, 4, 0, 0, 0]);
    expect(count()).toBe(items.length);
  });

  it('refuses an item whose candidates are malformed (not 42 ASCII chars, not hex, too many) and keeps its neighbours', () => {
    const s = signed[10 * 1 + 4];
    const good: SignedMessage = { message: s.message, signature_hex: sigHex(s), expected_address: ADDRS[0], other_addresses: [ADDRS[1]] };
    const bad = (other_addresses: unknown): SignedMessage => ({ ...good, other_addresses: other_addresses as string[] });
    const items = [
      good,
      bad([ADDRS[1].slice(0, 41)]),
      bad(['0x' + 'zz'.repeat(20)]),
      bad([ADDRS[1].slice(0, 41) + 'é']),
      bad([42]),
      bad('not an array'),
      bad(new Array<string>(SIGNERS_PER_CHECK_MAX).fill(ADDRS[1])),
      // the most candidates an item may name: the last of them signed, verdict 255
      bad(new Array<string>(SIGNERS_PER_CHECK_MAX - 2).fill(ADDRS[2]).concat([ADDRS[1]])),
      good,
    ];
    expect(verdictsOf(items, createRecoverer())).toEqual([2, 0, 0, 0, 0, 0, 0, SIGNERS_PER_CHECK_MAX, 2]);
  });

  it('refuses a signature or address of the right length with a non-ASCII char, wherever it is, also one whose low byte is a hex digit', () => {
    // The codec writes the texts as UTF-8 at an offset (Buffer#write): a non-ASCII char must never
    // reach the worker's hex parse as an ASCII digit (U+0130 and U+0161 have low bytes '0' and 'a').
    const s = signed[3];
    const good: SignedMessage = { message: s.message, signature_hex: sigHex(s), expected_address: s.address };
    const at = (text: string, i: number, c: string): string => text.slice(0, i) + c + text.slice(i + 1);
    const sig = good.signature_hex;
    const addr = good.expected_address;
    const items: SignedMessage[] = [good];
    for (const c of ['\u0130', '\u0161', 'é', '😀'.slice(0, 1)]) {
      for (const i of [0, 2, 70, sig.length - 1]) items.push({ ...good, signature_hex: at(sig, i, c) });
      for (const i of [1, 2, 20, addr.length - 1]) items.push({ ...good, expected_address: at(addr, i, c) });
    }
    items.push(good);
    for (const k of [0, items.length - 1]) expect(sigHex(s)).toBe(items[k].signature_hex);
    const expected = items.map((_, k) => (k === 0 || k === items.length - 1 ? 1 : 0));
    expect(verdictsOf(items, createRecoverer())).toEqual(expected);
  });
});

describe('verify pool (compiled worker)', () => {
  let pool: VerifyPool;

  beforeAll(() => {
    const worker = fileURLToPath(defaultWorkerFile());
    expect(existsSync(worker), `${worker} missing: run npx tsc -p tsconfig.json first`).toBe(true);
    pool = createVerifyPool({ threads: 2 });
  });

  afterAll(async () => {
    await pool?.close();
  });

  it('verifies ~1000 mixed items in batch tasks, each verdict right', async () => {
    const { items, expected } = mixedBatch(1000);
    expect(expected.filter((x) => x === 1).length).toBe(300);
    const verdicts = await pool.verifyBatch(items);
    expect(verdicts).toBeInstanceOf(Uint8Array);
    expect(verdicts.length).toBe(1000);
    for (let i = 0; i < items.length; i++) expect(verdicts[i], `item ${i} (kind ${i % 10})`).toBe(expected[i]);
    expect(pool.pendingTasks).toBe(0);
  });

  it('concurrent calls keep their own order', async () => {
    const a = mixedBatch(230);
    const b = mixedBatch(170);
    const [va, vb] = await Promise.all([pool.verifyBatch(a.items), pool.verifyBatch(b.items.slice().reverse())]);
    expect(Array.from(va)).toEqual(a.expected);
    expect(Array.from(vb)).toEqual(b.expected.slice().reverse());
  });

  it('reports each item\'s task start and end in times_ms (stage timings), tasks of taskSize items', async () => {
    const { items, expected } = mixedBatch(250);
    const times = new Float64Array(2 * items.length);
    const before = performance.timeOrigin + performance.now();
    const verdicts = await pool.verifyBatch(items, times);
    const after = performance.timeOrigin + performance.now();
    expect(Array.from(verdicts)).toEqual(expected);
    for (let i = 0; i < items.length; i++) {
      const [start, end] = [times[2 * i], times[2 * i + 1]];
      // Another thread's clock: same epoch, allow a millisecond of skew between timeOrigins.
      expect(start, `item ${i}`).toBeGreaterThan(before - 1);
      expect(end, `item ${i}`).toBeLessThan(after + 1);
      expect(end).toBeGreaterThanOrEqual(start);
      // Items of one task (taskSize of them) share its times.
      if (i % pool.taskSize !== 0) expect([times[2 * i - 2], times[2 * i - 1]]).toEqual([start, end]);
    }
  });

  it('an empty batch answers an empty array', async () => {
    expect((await pool.verifyBatch([])).length).toBe(0);
  });

  it('the noble backend gives the same verdicts', async () => {
    const p = createVerifyPool({ threads: 1, backend: 'noble', taskSize: 64 });
    try {
      const { items, expected } = mixedBatch(300);
      expect(Array.from(await p.verifyBatch(items))).toEqual(expected);
    } finally {
      await p.close();
    }
  });

  it('a valid signature from a fresh key verifies through the pool', async () => {
    const key = '0x' + '5a'.repeat(32);
    const message = 'ringbook:withdraw:' + addressFromPrivateKey(key) + ':USDC:1:99';
    const item = { message, signature_hex: signPersonalMessage(key, message), expected_address: addressFromPrivateKey(key) };
    expect(Array.from(await pool.verifyBatch([item, { ...item, message: message + '0' }]))).toEqual([1, 0]);
  });

  it('checkOneHere: a check on the calling thread gives the worker\'s verdicts; idle says when no task is in flight', async () => {
    const p = createVerifyPool({ threads: 1 });
    try {
      const { items, expected } = mixedBatch(60);
      const times = new Float64Array(2);
      expect(p.idle).toBe(true);
      for (let i = 0; i < items.length; i++) {
        const before = performance.timeOrigin + performance.now();
        expect(p.checkOneHere(items[i], times), `item ${i} (kind ${i % 10})`).toBe(expected[i]);
        expect(times[0]).toBeGreaterThanOrEqual(before);
        expect(times[1]).toBeGreaterThanOrEqual(times[0]);
      }
      expect(p.inlineChecked).toBe(60);
      // The same items through the worker: the same verdicts.
      expect(Array.from(await p.verifyBatch(items))).toEqual(expected);
      // Which candidate signed (an agent): the worker's verdict bytes, here too.
      const s = signed[10 * 2 + 3];
      const agent_signed = { message: s.message, signature_hex: hex(s.sig), expected_address: ADDRS[0], other_addresses: [ADDRS[1], ADDRS[2]] };
      expect(p.checkOneHere(agent_signed)).toBe(3);
      expect(p.checkOneHere({ ...agent_signed, other_addresses: [ADDRS[1]] })).toBe(0);
      expect(Array.from(await p.verifyBatch([agent_signed, agent_signed]))).toEqual([3, 3]);
      // Hostile input is a verdict of 0, not a throw.
      expect(p.checkOneHere({ message: 'x', signature_hex: '0x12', expected_address: 'nope' })).toBe(0);
      expect(p.inlineChecked).toBe(63);
      // A task in flight: not idle until it is answered.
      const busy = p.verifyBatch(items);
      expect(p.idle).toBe(false);
      expect(Array.from(await busy)).toEqual(expected);
      expect(p.idle).toBe(true);
    } finally {
      await p.close();
    }
    expect(p.idle).toBe(false);
    expect(() => p.checkOneHere(mixedBatch(1).items[0])).toThrow(/closed/);
  });

  it('refuses bad options, a missing worker file, and use after close', async () => {
    expect(() => createVerifyPool({ threads: 0 })).toThrow(RangeError);
    expect(() => createVerifyPool({ taskSize: 1.5 })).toThrow(RangeError);
    expect(() => createVerifyPool({ taskSize: 1_000_000 })).toThrow(RangeError);
    expect(() => createVerifyPool({ workerFile: '/nonexistent/verify_worker.js' })).toThrow(/not found/);
    const p = createVerifyPool({ threads: 1 });
    await p.close();
    await expect(p.verifyBatch([])).rejects.toThrow(/closed/);
    await expect(pool.verifyBatch('nope' as never)).rejects.toThrow(TypeError);
  });

  it('wraps around a small ring and queues what does not fit, every verdict right', async () => {
    // 64 KiB rings: ~130 items of ~500 bytes per half ring, so 3,000 items in tasks of 50 go
    // round each ring many times and most tasks wait in the front's backlog first.
    const p = createVerifyPool({ threads: 2, ringBytes: 64 * 1024, taskSize: 50 });
    try {
      const runs = [mixedBatch(1000), mixedBatch(1200), mixedBatch(800)];
      const verdicts = await Promise.all(runs.map((r) => p.verifyBatch(r.items)));
      runs.forEach((r, k) => expect(Array.from(verdicts[k])).toEqual(r.expected));
      expect(p.pendingTasks).toBe(0);
      // A lone item larger than half a ring is refused, its neighbours still checked.
      const big = { ...signed[0], message: 'x'.repeat(20_000) };
      const [ok] = mixedBatch(1).items;
      const v = await p.verifyBatch([ok, { message: big.message, signature_hex: hex(big.sig), expected_address: big.address }, ok]);
      expect(Array.from(v)).toEqual([1, 0, 1]);
    } finally {
      await p.close();
    }
  });

  it('a worker that dies fails its batch (no hang) and is replaced; one that never starts breaks the pool', async () => {
    const exits = createVerifyPool({ threads: 1, workerFile: new URL('./fixtures/verify_worker_exits.mjs', import.meta.url) });
    try {
      await exits.ready(); // it serves (READY) before it dies, so it is replaced, not a broken build
      expect(exits.workersReady).toBe(true);
      await expect(exits.verifyBatch(mixedBatch(5).items)).rejects.toThrow(/exited with code: 3/);
      // The replacement takes the next task once it serves (and dies the same way): still an
      // answer, not a hang.
      await exits.ready();
      expect(exits.workersReady).toBe(true);
      await expect(exits.verifyBatch(mixedBatch(5).items)).rejects.toThrow(/exited with code: 3/);
      expect(exits.pendingTasks).toBe(0);
      // Each death that came after serving was a restart; the pool is not broken by them.
      expect(exits.workerRestarts).toBe(2);
      expect(exits.state()).toMatchObject({ threads: 1, worker_restarts: 2, broken: null, broken_at_ms: null });
    } finally {
      await exits.close();
    }
    const broken = createVerifyPool({ threads: 1, workerFile: new URL('./fixtures/verify_worker_broken.mjs', import.meta.url) });
    const first = broken.verifyBatch(mixedBatch(3).items);
    await expect(first).rejects.toThrow(/broken verify worker build/);
    await expect(broken.verifyBatch(mixedBatch(3).items)).rejects.toThrow(/broken verify worker build/);
    const state = broken.state();
    expect(state).toMatchObject({ threads: 1, workers_ready: 0, worker_restarts: 0 });
    expect(state.broken).toMatch(/^a verify worker ended before it served \(broken verify worker build\)$/);
    expect(state.broken_at_ms).toBeGreaterThan(Date.now() - 60_000);
    await broken.close();
  });

  it('a worker that dies after serving and whose replacement cannot load breaks the pool (no task waits for ever, stealing off)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-verify-'));
    // Worker threads copy process.env when they start (the replacement too).
    const env: Record<string, string> = {
      RINGBOOK_TEST_VERIFY_MARK_FILE: path.join(dir, 'first'), RINGBOOK_TEST_VERIFY_DIES_AFTER_TASKS: '2', RINGBOOK_TEST_VERIFY_REPLACEMENT: 'broken',
    };
    Object.assign(process.env, env);
    const p = createVerifyPool({ threads: 1, stealAfterUs: 0, workerFile: new URL('./fixtures/verify_worker_dies_after.mjs', import.meta.url) });
    try {
      await p.ready(10_000);
      expect(p.state()).toMatchObject({ workers_ready: 1, worker_restarts: 0, broken: null });
      const { items, expected } = mixedBatch(3);
      expect(Array.from(await p.verifyBatch(items))).toEqual(expected);
      expect(Array.from(await p.verifyBatch(items))).toEqual(expected);
      // The third task: the worker claims it and dies.
      await expect(p.verifyBatch(items)).rejects.toThrow(/exited with code: 3/);
      // Its replacement throws while loading: Piscina starts no thread after that, so the new
      // ring would never be served; the pool breaks instead and refuses, at once.
      for (let i = 0; i < 200 && p.broken === null; i++) await new Promise((r) => setTimeout(r, 25));
      expect(p.broken?.message).toMatch(/^a verify worker could not start \(broken verify worker replacement\)$/);
      await expect(p.verifyBatch(items)).rejects.toThrow(/could not start/);
      expect(p.state()).toMatchObject({ workers_ready: 0, worker_restarts: 1 });
      expect(p.pendingTasks).toBe(0);
    } finally {
      // close() does not wait for the lane whose task never got a thread.
      await p.close();
      for (const k of Object.keys(env)) delete process.env[k];
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the front checks tasks that waited too long (stealAfterUs)', () => {
  const fixture = (name: string): URL => new URL(`./fixtures/${name}`, import.meta.url);
  /** Waits (bounded) until the pool's workers serve their rings: one still loading claims nothing. */
  async function ready(p: VerifyPool): Promise<void> {
    for (let i = 0; i < 400 && !p.workersReady; i++) await new Promise((r) => setTimeout(r, 25));
    expect(p.workersReady).toBe(true);
  }

  it('a worker that never checks: every task, in the ring or in the backlog, is checked by the calling thread after the limit', async () => {
    // 64 KiB ring, tasks of 50 (~25 KB): two tasks fit, the other ten wait in the front's backlog.
    const p = createVerifyPool({ threads: 1, ringBytes: 64 * 1024, taskSize: 50, stealAfterUs: 1000, workerFile: fixture('verify_worker_stalled.mjs') });
    try {
      const { items, expected } = mixedBatch(600);
      const times = new Float64Array(2 * items.length);
      const asked = performance.timeOrigin + performance.now();
      const verdicts = await p.verifyBatch(items, times);
      expect(Array.from(verdicts)).toEqual(expected);
      expect(p.stolenChecked).toBe(600);
      expect(p.pendingTasks).toBe(0);
      expect(p.queuedTasks).toBe(0);
      // None was checked before it had waited the limit (1 ms).
      for (let i = 0; i < items.length; i++) expect(times[2 * i], `item ${i}`).toBeGreaterThanOrEqual(asked + 1 - 0.05);
    } finally {
      await p.close();
    }
  });

  /**
   * A first batch (one task, which the holds-first worker claims and holds), then, 20 ms later, a
   * second (two tasks); both verdicts checked. Returns which batch was answered first.
   */
  async function firstThenSecond(p: VerifyPool): Promise<string[]> {
    await ready(p);
    const first = mixedBatch(10);
    const second = mixedBatch(20); // two tasks of 10
    const order: string[] = [];
    const a = p.verifyBatch(first.items).then((v) => (order.push('first'), v));
    await new Promise((r) => setTimeout(r, 20));
    const b = p.verifyBatch(second.items).then((v) => (order.push('second'), v));
    expect(Array.from(await a)).toEqual(first.expected);
    expect(Array.from(await b)).toEqual(second.expected);
    return order;
  }

  it('a task behind one the worker holds is checked by the front and answered first; the held one by the worker', async () => {
    // A 250 ms limit: the worker claims the first task long before (it is woken at once); it holds
    // it until the front has taken the later ones.
    const p = createVerifyPool({ threads: 1, taskSize: 10, stealAfterUs: 250_000, workerFile: fixture('verify_worker_holds_first.mjs') });
    try {
      expect(await firstThenSecond(p)).toEqual(['second', 'first']);
      expect(p.stolenChecked).toBe(20);
      // The worker goes on serving its ring (it passed over the tasks the front took).
      const after = mixedBatch(30);
      expect(Array.from(await p.verifyBatch(after.items))).toEqual(after.expected);
      expect(p.stolenChecked).toBe(20);
    } finally {
      await p.close();
    }
  });

  it('with stealing off (0, the pool default) the worker checks everything, in order', async () => {
    const p = createVerifyPool({ threads: 1, taskSize: 10, workerFile: fixture('verify_worker_holds_first.mjs') });
    try {
      expect(p.stealAfterUs).toBe(0);
      expect(await firstThenSecond(p)).toEqual(['first', 'second']);
      expect(p.stolenChecked).toBe(0);
    } finally {
      await p.close();
    }
  });

  it('refuses a steal limit out of range', () => {
    expect(() => createVerifyPool({ stealAfterUs: -1 })).toThrow(RangeError);
    expect(() => createVerifyPool({ stealAfterUs: 1.5 })).toThrow(RangeError);
    expect(() => createVerifyPool({ stealAfterUs: 1_000_001 })).toThrow(RangeError);
  });
});

describe('which secp256k1 library each checking thread calls (secp256k1Threads)', () => {
  const ENV = 'RINGBOOK_SECP256K1';

  it('the workers report their own choice: workers started on noble, the front on npm, each named as it is', async () => {
    const before = process.env[ENV];
    // A worker takes process.env as it is when Piscina starts it; the front's recoverer is made
    // at its first use. Different switches for the two show where each name comes from.
    process.env[ENV] = 'noble';
    const p = createVerifyPool({ threads: 2 });
    try {
      await p.ready();
      process.env[ENV] = 'npm';
      const t = p.secp256k1Threads();
      expect(t).toEqual({ front: 'npm', verify_workers: ['noble', 'noble'] });
      expect(describeSecp256k1Threads(t)).toBe('front npm, 2 verify workers noble');
      // And they check with what they name: a task on the workers, one on the front, same verdicts.
      const { items, expected } = mixedBatch(20);
      expect(Array.from(await p.verifyBatch(items))).toEqual(expected);
      expect(p.checkOneHere(items[0])).toBe(expected[0]);
    } finally {
      if (before === undefined) delete process.env[ENV];
      else process.env[ENV] = before;
      await p.close();
    }
  });

  it('ready(wait_ms_max) gives up on a worker still loading after that long; it is named null', async () => {
    const loading = createVerifyPool({ threads: 1, workerFile: new URL('./fixtures/verify_worker_never_ready.mjs', import.meta.url) });
    try {
      const t0 = performance.now();
      // The fixture never serves: only the 200 ms limit can settle ready(). The 30 s race is a
      // hang guard (a limit not kept would never settle), not a bound on how soon it settles.
      let guard: NodeJS.Timeout | undefined;
      const settled = await Promise.race([
        loading.ready(200).then(() => 'settled'),
        new Promise<string>((resolve) => (guard = setTimeout(() => resolve('still waiting after 30 s'), 30_000))),
      ]);
      clearTimeout(guard);
      expect(settled).toBe('settled');
      // Not before the limit (a lower bound: a busy machine only makes the wait longer).
      expect(performance.now() - t0).toBeGreaterThanOrEqual(195);
      expect(loading.workersReady).toBe(false);
      expect(loading.secp256k1Threads().verify_workers).toEqual([null]);
    } finally {
      await loading.close();
    }
  });

  it('ready() settles for a worker that never starts; it is named null (not started)', async () => {
    const broken = createVerifyPool({ threads: 1, workerFile: new URL('./fixtures/verify_worker_broken.mjs', import.meta.url) });
    try {
      await broken.ready();
      const t = broken.secp256k1Threads();
      expect(t.verify_workers).toEqual([null]);
      expect(describeSecp256k1Threads(t)).toBe(`front ${t.front}, 1 verify worker not started`);
    } finally {
      await broken.close();
    }
  });
});
