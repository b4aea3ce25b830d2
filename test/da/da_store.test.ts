// DA store (LMDB and memory), the journal reader the publisher uses, and the JSON wire form.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ARENA_BYTES_KEPT_MAX, LmdbDaStore } from '../../src/da/da_store.js';
import type { DaStore } from '../../src/da/da_store_contract.js';
import { MemoryDaStore } from '../../src/da/memory_da_store.js';
import { JournalReader } from '../../src/da/journal_reader.js';
import { batchFromJson, batchToJson, MalformedBatch, type PublishedBatch } from '../../src/da/published.js';
import { Journal } from '../../src/journal/journal.js';
import { decodeBatch, encodeBatch } from '../../src/journal/journal_codec.js';
import { batch, fill, H } from './store_batches.js';
import { RECORD_WORDS } from '../../src/ring/records.js';
import type { LeafChange } from '../../src/da/state_root.js';
import { encodeChanges } from '../../src/da/state_diff.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const fromHex0x = (text: string): Uint8Array => Buffer.from(text.slice(2), 'hex');

const tmp = tempDirsPerFile('ringbook-da-');

async function exercise(store: DaStore): Promise<void> {
  expect(store.latest()).toBe(0);
  expect(store.get(1)).toBeUndefined();
  const p1 = store.submit(batch(1, [fill(1, 1, 10, 9)]));
  // Readable before the write commits.
  expect(store.get(1)?.header.state_root).toBe(H(1));
  expect(store.fillsOfOrder(10)).toEqual([{ fill_id: 1, batch_id: 1 }]);
  await p1;
  await store.submit(batch(2));
  await store.submit(batch(3, [fill(3, 2, 11, 9), fill(3, 3, 12, 9)]));
  await expect(store.submit(batch(5))).rejects.toThrow(/batch 5 after 3/);
  expect(store.latest()).toBe(3);
  expect(store.get(3)).toEqual(batch(3, [fill(3, 2, 11, 9), fill(3, 3, 12, 9)]));
  expect(store.get(4)).toBeUndefined();
  expect(store.get(0)).toBeUndefined();
  expect(store.fillsOfOrder(9)).toEqual([{ fill_id: 1, batch_id: 1 }, { fill_id: 2, batch_id: 3 }, { fill_id: 3, batch_id: 3 }]);
  expect(store.fillsOfOrder(12)).toEqual([{ fill_id: 3, batch_id: 3 }]);
  expect(store.fillsOfOrder(13)).toEqual([]);
}

describe('DA store', () => {
  it('memory: contiguous submits, get, fills by order', async () => {
    await exercise(new MemoryDaStore());
  });

  // sync_commits: the DA worker's store commits on its own thread (transactionSync).
  it.each([false, true])('LMDB: the same, and it survives a reopen (sync_commits %s)', async (sync_commits) => {
    const dir = tmp();
    const s = LmdbDaStore.open(dir, { commit_interval_ms: sync_commits ? 0 : undefined, sync_commits });
    await exercise(s);
    await s.close();
    const again = LmdbDaStore.open(dir, { sync_commits });
    expect(again.latest()).toBe(3);
    expect(again.get(1)).toEqual(batch(1, [fill(1, 1, 10, 9)]));
    expect(again.fillsOfOrder(9).map((r) => r.fill_id)).toEqual([1, 2, 3]);
    await again.submit(batch(4));
    expect(again.latest()).toBe(4);
    // The publisher's form: the input bytes alongside, the hex made only if read back.
    const bytes = Buffer.alloc(RECORD_WORDS * 4, 0xcd);
    let hex_made = 0;
    const lazy: PublishedBatch = {
      ...batch(5),
      get inputs_hex(): string {
        hex_made++;
        return bytes.toString('hex');
      },
    };
    await again.submit(lazy, bytes);
    expect(hex_made).toBe(0);
    expect(again.commits).toBe(2);
    await again.close();
    const third = LmdbDaStore.open(dir);
    expect(third.get(5)?.inputs_hex).toBe('cd'.repeat(RECORD_WORDS * 4));
    await third.close();
  });
});

describe('DA store commits', () => {
  it('LMDB: the inputs are copied at submit (the caller reuses one buffer, as the DA worker its journal reads), through commits that reuse and grow the copies\' space', async () => {
    const dir = tmp();
    const w = LmdbDaStore.open(dir, { commit_interval_ms: 60_000 }); // groups end at written()
    const reused = Buffer.alloc(RECORD_WORDS * 4 * 200);
    const sizes = new Map<number, number>();
    const hexOf = (id: number): string => Buffer.alloc(sizes.get(id)! * RECORD_WORDS * 4, id & 0xff).toString('hex');
    let id = 0;
    // Groups of 1 to 30 batches of 1 to 200 records: the first groups fit the initial 64 KiB, later
    // ones outgrow it; each group is submitted while the one before is being committed, and the
    // groups after the first two reuse a committed group's space.
    let in_flight: Promise<void> = Promise.resolve();
    for (const [group, per] of [[5, 3], [1, 200], [30, 40], [12, 150], [3, 1], [25, 200], [2, 7], [9, 90]] as const) {
      for (let k = 0; k < group; k++) {
        id++;
        sizes.set(id, ((id * 37) % per) + 1);
        const inputs = reused.subarray(0, sizes.get(id)! * RECORD_WORDS * 4).fill(id & 0xff);
        void w.submit({ ...batch(id), inputs_hex: '' }, inputs);
        reused.fill(0xee); // the caller's next read overwrites its buffer
        expect(w.get(id)?.inputs_hex, `batch ${id} while pending`).toBe(hexOf(id));
      }
      await in_flight;
      for (let b = 1; b <= id; b++) expect(w.get(b)?.inputs_hex, `batch ${b}`).toBe(hexOf(b));
      in_flight = w.written();
    }
    await in_flight;
    await w.close();
    const again = LmdbDaStore.open(dir);
    for (let b = 1; b <= id; b++) expect(again.get(b)?.inputs_hex, `batch ${b} after a reopen`).toBe(hexOf(b));
    await again.close();
  });

  it('LMDB: an arena a huge group grew is not kept for later groups (ARENA_BYTES_KEPT_MAX); one within it is', async () => {
    const w = LmdbDaStore.open(tmp(), { commit_interval_ms: 60_000 }); // groups end at written()
    await Promise.all([w.submit(batch(1)), w.written()]);
    const small_kept = w.arenaBytesKept();
    expect(small_kept).toBeGreaterThan(0); // the first group's arena, kept
    expect(small_kept).toBeLessThanOrEqual(ARENA_BYTES_KEPT_MAX);
    // One group of 3 MiB of inputs (a replay's burst): it takes the kept arena and grows it.
    const huge = Buffer.alloc(3 * ARENA_BYTES_KEPT_MAX, 0x5a);
    await Promise.all([w.submit({ ...batch(2), inputs_hex: '' }, huge), w.written()]);
    expect(w.arenaBytesKept()).toBe(0);
    expect(w.get(2)?.inputs_hex).toBe(huge.toString('hex'));
    // The next group starts in a new small arena, which is kept again.
    await Promise.all([w.submit(batch(3)), w.written()]);
    expect(w.arenaBytesKept()).toBe(small_kept);
    expect(w.get(3)).toEqual(batch(3));
    await w.close();
  });

  it('memory: the inputs are copied at submit too', async () => {
    const m = new MemoryDaStore();
    const inputs = Buffer.alloc(RECORD_WORDS * 4, 0x11);
    await m.submit({ ...batch(1), inputs_hex: '' }, inputs);
    inputs.fill(0x22);
    expect(m.get(1)?.inputs_hex).toBe('11'.repeat(RECORD_WORDS * 4));
  });

  it('memory: a caller changing its batch after submit (getters and objects) changes nothing served, as LMDB once committed', async () => {
    // The batch as the DA publisher makes it: inputs_hex and state_diff are getters over the
    // caller's own (reused) state; header, fills and diff are the caller's objects.
    const mutable = (inputs: Buffer, diff: LeafChange[]): PublishedBatch => {
      const b = batch(1, [fill(1, 1, 10, 9)]);
      return {
        header: b.header,
        fills: b.fills,
        get inputs_hex(): string {
          return inputs.toString('hex');
        },
        get state_diff(): LeafChange[] {
          return diff;
        },
      };
    };
    const want = batch(1, [fill(1, 1, 10, 9)]);
    const dir = tmp();
    const stores: [string, DaStore][] = [['memory', new MemoryDaStore()], ['LMDB', LmdbDaStore.open(dir)]];
    for (const [name, store] of stores) {
      const inputs = Buffer.from(want.inputs_hex, 'hex');
      const diff = want.state_diff!.map((c) => ({ ...c }));
      const b = mutable(inputs, diff);
      const submitted = store.submit(b);
      if (store instanceof LmdbDaStore) await store.written();
      await submitted;
      // The caller reuses its buffer and changes every object it handed over.
      inputs.fill(0xcd);
      diff[0].value = null;
      diff.push({ kind: 2, key: '0x01', value: '0x02' });
      b.header.state_root = H(99);
      b.fills[0].price = 1;
      b.fills.push(fill(1, 2, 11, 9));
      expect(store.get(1), name).toEqual(want);
      expect(store.fillsOfOrder(11), name).toEqual([]);
    }
    await stores[1][1].close();
  });

  it('memory: a batch with state_diff_bytes is served with its diff decoded, as LMDB serves it', async () => {
    const want = batch(1);
    const m = new MemoryDaStore();
    const { state_diff, ...rest } = want;
    const raw = state_diff!.map((c) => ({ kind: c.kind, key: fromHex0x(c.key), value: c.value === null ? null : fromHex0x(c.value) }));
    await m.submit({ ...rest, state_diff_bytes: encodeChanges(raw) });
    expect(m.get(1)).toEqual(want);
  });

  it('LMDB: batches submitted within the commit interval share one commit; another handle reads them once it is done', async () => {
    const dir = tmp();
    const w = LmdbDaStore.open(dir, { commit_interval_ms: 60_000 }); // only written() commits here
    const r = LmdbDaStore.open(dir, { reader: true });
    const submitted = [1, 2, 3, 4, 5].map((id) => w.submit(batch(id, id === 3 ? [fill(3, 1, 10, 9)] : [])));
    expect(w.commits).toBe(0);
    // The writing handle serves them from memory meanwhile; the reader does not see them yet.
    expect(w.get(5)).toEqual(batch(5));
    expect(w.fillsOfOrder(10)).toEqual([{ fill_id: 1, batch_id: 3 }]);
    expect(r.latest()).toBe(0);
    expect(r.get(1)).toBeUndefined();
    await w.written();
    await Promise.all(submitted);
    expect(w.commits).toBe(1);
    expect(r.latest()).toBe(5);
    expect(r.get(3)).toEqual(batch(3, [fill(3, 1, 10, 9)]));
    expect(r.fillsOfOrder(9)).toEqual([{ fill_id: 1, batch_id: 3 }]);
    // Interval 0: what one turn submits is one commit, at the end of the turn.
    await w.close();
    const z = LmdbDaStore.open(dir, { commit_interval_ms: 0 });
    const more = [6, 7, 8].map((id) => z.submit(batch(id)));
    await Promise.all(more);
    expect(z.commits).toBe(1);
    expect(r.latest()).toBe(8);
    await z.close();
    await r.close();
  });
});

/**
 * Another process holding LMDB's write lock on `dir` (a synchronous write transaction that waits
 * for a line on its stdin): a commit this process starts meanwhile waits for it, as behind a
 * synced or busy disk. Resolves once the lock is held; `release` ends it.
 */
async function holdWriteLock(dir: string): Promise<{ release: () => Promise<void> }> {
  const script = `
    import fs from 'node:fs';
    import { open } from 'lmdb';
    const root = open({ path: process.env.HOLD_DIR, compression: false });
    root.transactionSync(() => { fs.writeSync(1, 'held\\n'); fs.readSync(0, Buffer.alloc(1)); });
    await root.close();`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: process.cwd(), env: { ...process.env, HOLD_DIR: dir }, stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('lock holder did not start within 10 s')), 10_000);
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('held')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => reject(new Error(`lock holder exited with ${code}`)));
  });
  return {
    release: async () => {
      child.stdin.end('\n');
      expect(await exited).toBe(0);
    },
  };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('DA store commits behind a slow one', () => {
  it('LMDB: batches submitted while a commit is in flight go in ONE following commit, not one per interval', async () => {
    const dir = tmp();
    const interval_ms = 10;
    const w = LmdbDaStore.open(dir, { commit_interval_ms: interval_ms });
    await Promise.all([w.submit(batch(1)), w.written()]);
    expect(w.commits).toBe(1);
    const lock = await holdWriteLock(dir);
    let first_done = false;
    const first = w.submit(batch(2)).then(() => {
      first_done = true;
    });
    await sleep(3 * interval_ms); // its interval passed: its commit started and waits for the lock
    expect(w.commits).toBe(2);
    // Eight more intervals' worth of batches while that commit is held: no commit starts for them.
    const later: Promise<void>[] = [];
    for (let id = 3; id <= 10; id++) {
      later.push(w.submit(batch(id, id === 7 ? [fill(7, 1, 10, 9)] : [])));
      await sleep(2 * interval_ms);
    }
    expect(first_done).toBe(false);
    expect(w.commits).toBe(2);
    expect(w.get(10)).toEqual(batch(10)); // readable meanwhile through this handle
    await lock.release();
    await first;
    await Promise.all(later);
    expect(w.commits).toBe(3); // batches 3..10: one commit, right after the held one
    expect(w.latest()).toBe(10);
    await w.close();
    const r = LmdbDaStore.open(dir, { reader: true });
    expect(r.latest()).toBe(10);
    for (let id = 1; id <= 10; id++) expect(r.get(id)).toEqual(batch(id, id === 7 ? [fill(7, 1, 10, 9)] : []));
    expect(r.fillsOfOrder(9)).toEqual([{ fill_id: 1, batch_id: 7 }]);
    await r.close();
  });

  it('LMDB: a commit that is quicker than the interval leaves the next group its interval', async () => {
    const dir = tmp();
    const w = LmdbDaStore.open(dir, { commit_interval_ms: 60_000 });
    const p1 = w.submit(batch(1));
    void w.written(); // commits batch 1 now
    const p2 = w.submit(batch(2)); // a new group, while batch 1's commit is in flight
    await p1;
    await sleep(20);
    expect(w.commits).toBe(1); // batch 2 waits for its own interval, not for the end of batch 1's commit
    await w.written();
    await p2;
    expect(w.commits).toBe(2);
    await w.close();
  });
});

describe('journal reader', () => {
  it('reads what Journal wrote: same bytes and stored hash as decodeBatch', async () => {
    const dir = tmp();
    const j = Journal.open(dir);
    const recs: Int32Array[] = [];
    for (let b = 1; b <= 3; b++) {
      const r = new Int32Array(RECORD_WORDS * b);
      for (let i = 0; i < r.length; i++) r[i] = (i * 7919 + b) | 0;
      recs.push(r);
      j.append(b, 1000 + b, r, b);
    }
    const reader = JournalReader.open(dir);
    for (let b = 1; b <= 3; b++) {
      const raw = reader.get(b)!;
      const ref = decodeBatch(encodeBatch(b, 1000 + b, recs[b - 1], b), b);
      expect(raw.count).toBe(b);
      expect(raw.time_ms).toBe(1000 + b);
      expect(raw.input_hash).toBe(ref.input_hash);
      expect(Buffer.compare(raw.inputs, Buffer.from(ref.records.buffer))).toBe(0);
    }
    expect(reader.get(4)).toBeUndefined();
    await reader.close();
    await j.close();
  });
});

describe('wire form', () => {
  it('round-trips, with batch ids as strings', () => {
    const b = batch(7, [fill(7, 4, 3, 2)]);
    const json = JSON.parse(JSON.stringify(batchToJson(b)));
    expect(json.header.batch_id).toBe('7');
    expect(batchFromJson(json)).toEqual(b);
  });

  it('refuses malformed batches', () => {
    const good = JSON.parse(JSON.stringify(batchToJson(batch(2, [fill(2, 1, 3, 2)]))));
    const bad = (mut: (x: any) => void): unknown => {
      const x = structuredClone(good);
      mut(x);
      return x;
    };
    for (const x of [
      bad((x) => { x.header.state_root = '0x12'; }),
      bad((x) => { x.header.batch_id = '-1'; }),
      bad((x) => { x.inputs_hex = 'xyz'; }),
      bad((x) => { x.fills[0].taker = 'nope'; }),
      bad((x) => { x.fills[0].taker_side = 'buy'; }),
      bad((x) => { x.state_diff = [{ kind: 1 }]; }),
      null,
    ]) expect(() => batchFromJson(x)).toThrow(MalformedBatch);
  });
});
