// The ringbook CLI end to end: keygen, journal inspect and replay against a data dir a real
// server wrote (replay must arrive at the state root the server published).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSnapshot } from '../../src/cli/snapshot.js';
import { snapshotPackr } from '../../src/snapshot/snapshot_file.js';
import { loadConfig } from '../../src/config/load.js';
import { engineConfigOf } from '../../src/config/read.js';
import { restoreFastEngine } from '../../src/engine/engine.js';
import { stateDigest } from '../../src/engine/state.js';
import { adminHeaders, api, caughtUpState, startServer, Wallet } from '../server/harness.js';
import { cli } from './run_cli.js';

describe('ringbook CLI', () => {
  const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-cli-'));
  let published_root = '';
  let last_batch = 0;

  beforeAll(async () => {
    const s = await startServer({ env: { RINGBOOK_DATA_DIR: data_dir } });
    const a = api(s.url);
    const maker = Wallet.random();
    const taker = Wallet.random();
    expect((await a.post('/deposit', { user: maker.address, asset: 'ETH', amount: '2' }, adminHeaders(s))).status).toBe(200);
    expect((await a.post('/deposit', { user: taker.address, asset: 'USDC', amount: '10000' }, adminHeaders(s))).status).toBe(200);
    expect((await a.post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'ask', price: 2_000_000_000, quantity: 1_000_000 }))).status).toBe(200);
    expect((await a.post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_000, quantity: 400_000 }))).status).toBe(200);
    // The state root is computed in its own thread a moment after the commit: wait for it.
    const st = await caughtUpState(s);
    published_root = st.state_root;
    last_batch = Number(st.batch_id);
    expect(published_root).toMatch(/^0x[0-9a-f]{64}$/);
    const stopped = await s.stop('SIGTERM');
    expect(stopped.code).toBe(0);
  }, 60_000);

  afterAll(() => fs.rmSync(data_dir, { recursive: true, force: true }));

  it('keygen prints a key and its address', async () => {
    const r = await cli(['keygen', '--json']);
    expect(r.code).toBe(0);
    const k = JSON.parse(r.stdout);
    expect(k.private_key).toMatch(/^0x[0-9a-f]{64}$/);
    expect(k.address).toMatch(/^0x[0-9a-f]{40}$/);
  });

  it('journal inspect lists every batch the server journaled', async () => {
    const r = await cli(['journal', 'inspect', '--data-dir', data_dir, '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.batches).toBe(last_batch);
    expect(j.requests).toBe(4);
    expect(j.rows.map((x: { batch_id: number }) => x.batch_id)).toEqual(Array.from({ length: last_batch }, (_, i) => i + 1));
  });

  it('replay rebuilds the state from the journal and reaches the published state root', async () => {
    const r = await cli(['replay', '--data-dir', data_dir, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.last_batch_id).toBe(last_batch);
    expect(j.state_root).toBe(published_root);
    expect(j.compared).toBe(last_batch);
    expect(j.mismatches).toEqual([]);
    // The requests, as journal inspect counts them: not the consent slots of the signed ones.
    expect(j.requests).toBe(4);
  });

  it('snapshot writes the engine at the last batch with its state root; the engine restores from it', async () => {
    const r = await cli(['snapshot', '--data-dir', data_dir, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.batch_id).toBe(last_batch);
    expect(j.state_root).toBe(published_root);
    const snap = readSnapshot(fs.readFileSync(j.file));
    expect(snap.batch_id).toBe(last_batch);
    expect(snap.state_root).toBe(published_root);
    expect(snap.engine_state.addresses.length).toBe(3 * 20); // fee account + maker + taker
    expect(snap.front).not.toBeNull();
    const engine = restoreFastEngine(engineConfigOf(loadConfig({})), snap.engine_state.canonical);
    expect(stateDigest(engine.canonicalState())).toBe(j.engine_digest);
    // A tampered snapshot is refused.
    const bad = snapshotPackr.unpack(fs.readFileSync(j.file)) as { engine: Uint8Array };
    bad.engine[bad.engine.length >> 1] ^= 1;
    expect(() => readSnapshot(snapshotPackr.pack(bad))).toThrow(/digest/);
  });

  it('refuses unknown commands with the usage exit code', async () => {
    const r = await cli(['frobnicate']);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain('unknown command');
  });
});
