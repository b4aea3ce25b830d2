// Consent on the record, on the real server (docs/verifiability.md, "Consent"): the DA batch of
// an order shows the order's signature and message; `ringbook verify` agrees on an honest run,
// and finds a fraud proof when a signature is tampered with (served by a proxy that keeps the
// input hash consistent) and when a request nobody signed is written into the journal.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeConsent } from '../../src/ring/consent.js';
import { createRecordRing, RECORD_WORDS } from '../../src/ring/records.js';
import { RequestWriter } from '../../src/ring/request_records.js';
import { emptyRequest, RequestKind, Side } from '../../src/engine/types.js';
import { Journal } from '../../src/journal/journal.js';
import {
  Wallet, caughtUpState, runVerifier, api, deposit, hexToBytes, keccak_256, bytesToHex, startServer,
} from './harness.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const tmp = tempDirsPerFile('ringbook-consent-');

function verify(url: string, config: string, out: string): ReturnType<typeof runVerifier> {
  return runVerifier(url, config, ['--out', out]);
}

/** A proxy in front of `upstream` that lets `edit` change each served batch (JSON). */
async function proxy(upstream: string, edit: (b: any) => void): Promise<{ url: string; close: () => void }> {
  const server = http.createServer((req, res) => {
    http.get(upstream + req.url, (up) => {
      const chunks: Buffer[] = [];
      up.on('data', (c) => chunks.push(c));
      up.on('end', () => {
        const env = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const b of Array.isArray(env.data) ? env.data : [env.data]) if (b && b.header) edit(b);
        res.writeHead(up.statusCode ?? 500, { 'content-type': 'application/json' });
        res.end(JSON.stringify(env));
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, close: () => server.close() };
}

const bid = { market_id: 'ETH-USDC', side: 'bid', price: 1000_000_000, quantity: 1_000_000 };

describe('consent on the record', () => {
  it('an order\'s DA batch shows its signature; verify agrees, and catches a tampered signature and a forged journal request', async () => {
    const data_dir = tmp();
    let s = await startServer({ env: { RINGBOOK_DATA_DIR: data_dir } });
    const config = path.join(tmp(), 'config.json');
    fs.copyFileSync(path.join(s.data_dir, 'test-config.json'), config);
    const a = api(s.url);
    const user = Wallet.random();
    const intruder = Wallet.random();
    expect((await deposit(s, user.address, 'USDC', '100000')).status).toBe(200);
    const body = user.order(bid);
    const placed = await a.post('/orders', body);
    expect(placed.status).toBe(200);
    const colon = await a.post('/orders', user.order(bid, { form: 'colon' }));
    expect(colon.status).toBe(200);
    // The market-maker members are signed in the JSON form and verified with it; a batch's items
    // carry their own consent slots.
    const guarded = await a.post('/orders', user.order({ ...bid, stp: 'expire_both', expires_after_ms: Date.now() + 600_000 }));
    expect(guarded.status).toBe(200);
    const batched = await a.post('/orders/batch', { requests: [
      { kind: 'order', ...user.order({ ...bid, stp: 'expire_maker' }) }, { kind: 'cancel_all', ...user.cancelAll() },
    ] });
    expect(batched.body.data.map((x: { ok: boolean }) => x.ok)).toEqual([true, true]);
    await caughtUpState(s);

    // 1. The batch of the order lists the order with its signature and message.
    const batch_id = placed.body.data.batch_id;
    const batch = (await a.get(`/da/batches/${batch_id}`)).body.data;
    const mine = batch.requests.find((r: { seq: number; kind: string; nonce: number }) => r.kind === 'order' && r.nonce === body.nonce);
    expect(mine).toMatchObject({
      origin: 'user', user: user.address, signature: (body.signature as string).toLowerCase(), message_form: 'json',
    });
    expect(JSON.parse(mine.message)).toMatchObject({ market_id: 'ETH-USDC', side: 'bid', nonce: body.nonce });
    expect(batch.inputs_hex).toContain((body.signature as string).slice(2).toLowerCase());
    const colon_batch = (await a.get(`/da/batches/${colon.body.data.batch_id}`)).body.data;
    expect(colon_batch.requests.find((r: { kind: string }) => r.kind === 'order').message_form).toBe('colon');
    const deposit_batch = (await a.get('/da/batches/1')).body.data;
    expect(deposit_batch.requests).toMatchObject([{ kind: 'deposit', origin: 'admin', signature: null }]);

    // 2. An honest run verifies clean.
    const honest = await verify(s.url, config, tmp());
    expect(honest.code, honest.stderr).toBe(0);

    // 3. A signature swapped for the intruder's (valid, over the same message), input hash fixed.
    const forged_sig = intruder.sign(mine.message).slice(2);
    const px = await proxy(s.url, (b) => {
      if (b.header.batch_id !== String(batch_id)) return;
      b.inputs_hex = b.inputs_hex.replace((body.signature as string).slice(2).toLowerCase(), forged_sig);
      b.header.input_hash = '0x' + bytesToHex(keccak_256(hexToBytes(b.inputs_hex)));
    });
    try {
      const out = tmp();
      const r = await verify(px.url, config, out);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`FRAUD in batch ${batch_id}: .*recovers to ${intruder.address}, not to the user`));
      const proof = JSON.parse(fs.readFileSync(path.join(out, `fraud-batch-${batch_id}-consent.json`), 'utf8'));
      expect(proof.consent_failures).toEqual([{ request: expect.stringContaining(user.address), expected_signer: user.address, recovered_signer: intruder.address }]);
    } finally {
      px.close();
    }

    // 4. The operator writes an order for the user into the journal, signed by someone else.
    expect((await s.stop('SIGTERM')).code).toBe(0);
    const journal = Journal.open(path.join(data_dir, 'journal'));
    const next = journal.lastBatchId() + 1;
    const r = emptyRequest();
    r.kind = RequestKind.PLACE;
    r.nonce = 1_000;
    r.market = 0;
    r.side = Side.BID;
    r.price_units = 1000_000_000;
    r.quantity_units = 1_000_000;
    const message = `{"market_id":"ETH-USDC","side":"bid","price":1000000000,"quantity":1000000,"order_type":"limit","time_in_force":"gtc","nonce":1000}`;
    const consent = encodeConsent({ origin: 'user', request: { signature: hexToBytes(intruder.sign(message).slice(2)), message }, payload: null });
    const ring = createRecordRing(16);
    const writer = new RequestWriter(ring);
    expect(writer.tryWrite(1, hexToBytes(user.address.slice(2)), 0, r, null, consent)).toBe(true);
    writer.flush();
    const n = ring.available();
    const records = new Int32Array(n * RECORD_WORDS);
    for (let i = 0; i < n; i++) records.set(ring.i32.subarray(ring.slotOffset(i), ring.slotOffset(i) + RECORD_WORDS), i * RECORD_WORDS);
    journal.append(next, Date.now(), records, n);
    await journal.close();
    s = await startServer({ env: { RINGBOOK_DATA_DIR: data_dir } });
    try {
      await caughtUpState(s);
      // The engine applied it (the journal is the operator's word): the order rests...
      const orders = (await api(s.url).get(`/account/${user.address}/orders`)).body.data;
      expect(orders.some((o: { price: number }) => o.price === 1000_000_000)).toBe(true);
      // ...but the verifier proves nobody asked for it.
      const out = tmp();
      const v = await verify(s.url, config, out);
      expect(v.code, v.stderr).toBe(2);
      expect(v.stderr).toMatch(new RegExp(`FRAUD in batch ${next}: request 0 \\(seq 1, order by ${user.address}, nonce 1000\\): the signature recovers to ${intruder.address}`));
      expect(fs.existsSync(path.join(out, `fraud-batch-${next}-consent.json`))).toBe(true);
      expect((await s.stop()).code).toBe(0);
    } finally {
      await s.stop();
    }
  }, 90_000);
});
