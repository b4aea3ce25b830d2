// NATS authentication and per-role permissions (docs/scale-out.md, "NATS authentication and
// permissions"; src/cluster/nats_auth.ts). The three NATS nodes run the documented sample
// config/nats-authorization.conf as it is (the docs point to that file): the roles connect with
// their RINGBOOK_NATS_USER / RINGBOOK_NATS_PASSWORD and work end to end under it, including the
// settlement paths (chain reader lease, poster lease, forced-entry shares, batch requests); a role
// without its credentials, or with wrong ones, exits non-zero saying so (and one given an unreachable
// URL still exits with "connection refused", not a refusal); the gateway's user cannot
// write the event stream or the matcher lease. Before, the roles had no credential settings at
// all: every role start here failed on "Authorization Violation".
// Real parts: a 3-node JetStream cluster (nats-server), the roles as real processes, the
// in-process EVM behind its JSON-RPC shim and the Settlement contract.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectCluster, NatsCredentials } from '../../src/cluster/nats_auth.js';
import { EVENT_STREAM, EVENT_SUBJECT, LEASE_BUCKET, REQUEST_STREAM, REQUEST_SUBJECT } from '../../src/cluster/log_format.js';
import type { Role } from '../../src/cluster/roles.js';
import { describePurgeError } from '../../src/cluster/request_purge.js';
import { adminState, api, balances, bytesToHex, REPO_ROOT, startServer, Wallet, type StartedServer } from '../server/harness.js';
import { daStatus, leadingFromGenesis, matcherStatus, P, startTestCluster, waitFor, type TestCluster, type TestClusterAuth } from './cluster_helpers.js';
import { devSettlement, OPERATOR_KEY, settlementConfig, type DevSettlement } from '../settlement/dev_chain.js';

const SAMPLE = path.join(REPO_ROOT, 'config', 'nats-authorization.conf');
const POLL_MS = 50;
const ETH = 10n ** 18n;
/** A forced entry waits this long before anyone may challenge (the contract's window). */
const DAY_S = 24 * 3600;

const ROLES: readonly Role[] = ['gateway', 'matcher', 'da'];
/**
 * Random per run: a test that finds one in a log or a status has found a leak, not a coincidence.
 * A letter first: nats-server reads `$NAME` as a config value (docs/scale-out.md).
 */
const PASSWORDS: Record<Role, string> = {
  gateway: 'gw-' + randomBytes(12).toString('hex'), matcher: 'mt-' + randomBytes(12).toString('hex'), da: 'da-' + randomBytes(12).toString('hex'),
};
const passwordVariable = (role: Role): string => `RINGBOOK_NATS_${role.toUpperCase()}_PASSWORD`;
const roleEnv = (role: Role): Record<string, string> => ({ RINGBOOK_NATS_USER: role, RINGBOOK_NATS_PASSWORD: PASSWORDS[role] });

function sampleAuth(): TestClusterAuth {
  const env = Object.fromEntries(ROLES.map((r) => [passwordVariable(r), PASSWORDS[r]]));
  return {
    nats: { authorization: fs.readFileSync(SAMPLE, 'utf8'), env, client: { user: 'gateway', pass: PASSWORDS.gateway } },
    roles: { gateway: roleEnv('gateway'), matcher: roleEnv('matcher'), da: roleEnv('da') },
  };
}

/** What nats-server logged as refused (a permission the sample lacks shows here first). */
function violations(c: TestCluster): string[] {
  return c.nats.nodes.flatMap((n) => n.log.split('\n').filter((l) => /Violation/.test(l)));
}

function connectAs(c: TestCluster, role: Role): Promise<NatsConnection> {
  return connectCluster(c.nats.urls(), NatsCredentials.fromEnv(roleEnv(role)), `test-${role}`);
}

/** No password anywhere in what a role printed or answers. */
function expectNoSecrets(text: string): void {
  for (const p of Object.values(PASSWORDS)) expect(text).not.toContain(p);
}

let c: TestCluster;
let dev: DevSettlement;
const alice = Wallet.random();

beforeAll(async () => {
  dev = await devSettlement([alice.address]);
  c = await startTestCluster(sampleAuth());
}, 60_000);

afterAll(async () => {
  await c?.stop();
  await dev?.chain.close();
});

describe('NATS authentication and permissions: the sample config', () => {
  it('the roles work end to end with their credentials under the sample permissions (settlement included), printing no secret', async () => {
    const settlement = settlementConfig(dev, POLL_MS);
    const m1 = await c.startMatcher('m1');
    await leadingFromGenesis(m1);
    const d1 = await c.startDa('d1', { RINGBOOK_SETTLEMENT_POSTER: '1', RINGBOOK_OPERATOR_KEY: OPERATOR_KEY }, settlement);
    const g1 = await c.startGateway('g1', settlement, { RINGBOOK_OPERATOR_KEY: OPERATOR_KEY });
    const key = '0x' + bytesToHex(alice.priv);

    // A deposit on chain, credited through the gateway's chain link (the chain reader lease).
    await dev.contract.send(key, 'depositEth', [], ETH);
    await waitFor('the deposit credited', 20_000, async () => ((await balances(g1, alice.address)).ETH?.available === 1_000_000 ? true : undefined), POLL_MS);

    // An order through the request stream, its batch through the event stream to the DA role
    // and its roots on chain from the DA role's poster (the poster lease).
    const r = await api(g1.url).post('/orders', alice.order({ market_id: 'ETH-USDC', side: 'ask', price: P, quantity: 100 }));
    expect(r.status).toBe(200);
    const order_batch = Number(r.body.data.batch_id);
    await waitFor('the order\'s batch posted', 20_000, async () => (Number(await dev.contract.readNumber('lastBatchId')) >= order_batch ? true : undefined), POLL_MS);

    // A forced entry the gateway refuses: its count travels as a share (rb.settlement.forced) to
    // the DA role, which asks the leader for a batch (rb.matcher.batch) and posts the count.
    const bytes = utf8ToBytes(JSON.stringify({ ...alice.cancelAll('ETH-USDC', { nonce: alice.nextNonce() }), kind: 'cancel_all' }));
    const nonce = 2n ** 53n;
    const message = `ringbook:force-include:${alice.address}:0x${bytesToHex(keccak_256(bytes))}:${nonce}`;
    await dev.contract.send(key, 'forceInclude', ['0x' + bytesToHex(bytes), nonce, alice.sign(message)]);
    await waitFor('the refused entry counted on chain', 20_000, async () => ((await dev.contract.readNumber('forcedProcessed')) === 1n ? true : undefined), POLL_MS);
    dev.chain.increaseTime(DAY_S + 1);
    await expect(dev.contract.send(key, 'challenge', [0])).rejects.toThrow(/NotOverdue/);

    const ds = await daStatus(d1);
    expect(ds.mismatches).toBe(0);
    expect(ds.settlement?.last_error).toBeNull();
    expect(ds.settlement?.shares_received).toBeGreaterThan(0);
    const ms = await matcherStatus(m1);
    expect(ms.mismatches).toBe(0);
    expect(ms.batch_requests.received).toBeGreaterThan(0);
    expect((await adminState(g1)).settlement.link.last_error).toBeNull();
    // Nothing the roles did was refused: the sample grants every subject they use.
    expect(violations(c)).toEqual([]);

    // No password in any role's output or status (the start line names the NATS user only).
    for (const s of [m1, d1, g1]) {
      const out = s.output();
      expectNoSecrets(out.stdout + out.stderr);
    }
    expectNoSecrets(JSON.stringify(ms) + JSON.stringify(ds) + JSON.stringify(await adminState(g1)));
  }, 120_000);

  it('a role without credentials, with a wrong password or with a bad setting exits non-zero saying why', async () => {
    const base = { RINGBOOK_NATS_URLS: c.nats.urls().join(','), RINGBOOK_ROLE: 'gateway', RINGBOOK_NODE_ID: 'g-refused' };
    const refused = async (env: Record<string, string>): Promise<string> => {
      const e = await startServer({ env: { ...base, ...env } }).then(
        (s: StartedServer) => s.stop('SIGKILL').then(() => new Error('the role started')), (x: unknown) => x);
      expect(e).toBeInstanceOf(Error);
      const text = (e as Error).message;
      expect(text).toMatch(/server exited \(code 1,/);
      return text;
    };
    expect(await refused({})).toMatch(/NATS \(nats:\/\/127\.0\.0\.1:\d+.*\) refused the connection with no credentials: Authorization Violation/);
    const wrong = await refused({ RINGBOOK_NATS_USER: 'gateway', RINGBOOK_NATS_PASSWORD: 'not-' + PASSWORDS.gateway });
    expect(wrong).toMatch(/refused the connection with user gateway: Authorization Violation/);
    expectNoSecrets(wrong);
    // Another role's password is not this user's.
    expect(await refused({ RINGBOOK_NATS_USER: 'gateway', RINGBOOK_NATS_PASSWORD: PASSWORDS.matcher })).toMatch(/refused the connection with user gateway/);
    // Bad settings are refused before any connection.
    expect(await refused({ RINGBOOK_NATS_USER: 'gateway', RINGBOOK_NATS_PASSWORD: 'x', RINGBOOK_NATS_TOKEN: 't' })).toMatch(/give one method only/);
    expect(await refused({ RINGBOOK_NATS_USER: 'gateway' })).toMatch(/RINGBOOK_NATS_USER needs RINGBOOK_NATS_PASSWORD/);
    const missing = path.join(os.tmpdir(), `ringbook-no-such-seed-${process.pid}`);
    expect(await refused({ RINGBOOK_NATS_NKEY_SEED_FILE: missing })).toMatch(/RINGBOOK_NATS_NKEY_SEED_FILE: cannot read .* ENOENT/);
    expect(await refused({ RINGBOOK_NATS_URLS: `nats://gateway:${PASSWORDS.gateway}@127.0.0.1:4222` })).toMatch(/no credentials in the URLs/);
    // Unreachable NATS is not a refusal: the start fails at once as it always did (connectCluster's first try leaves it alone).
    const closed_port = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(p));
      });
    });
    const unreachable = await refused({ ...roleEnv('gateway'), RINGBOOK_NATS_URLS: `nats://127.0.0.1:${closed_port}` });
    expect(unreachable).toMatch(/"ConnectionError","message":"connection refused: connect ECONNREFUSED 127\.0\.0\.1:\d+"[\s\S]*ringbook: start failed/);
    expect(unreachable).not.toMatch(/refused the connection with|TLS alert|certificate/);
  }, 60_000);

  it('the gateway\'s user cannot write the event stream, the matcher lease or the streams\' settings', async () => {
    const gw = await connectAs(c, 'gateway');
    const mt = await connectAs(c, 'matcher');
    try {
      const jsm = await jetstreamManager(mt);
      const last_seq = (await jsm.streams.info(EVENT_STREAM)).state.last_seq;
      const refusal = /Permissions Violation for Publish to/;
      // A forged batch: JetStream never sees it.
      await expect(jetstream(gw).publish(EVENT_SUBJECT, new Uint8Array(8), { timeout: 2000 })).rejects.toThrow(refusal);
      // The matcher lease: neither its keys nor its bucket's stream.
      await expect(gw.request(`$KV.${LEASE_BUCKET}.leader`, utf8ToBytes('g-evil'), { timeout: 2000 })).rejects.toThrow(refusal);
      await expect(gw.request(`$JS.API.STREAM.INFO.KV_${LEASE_BUCKET}`, new Uint8Array(0), { timeout: 2000 })).rejects.toThrow(refusal);
      // The streams' settings and contents: no update, purge, delete, message delete.
      for (const stream of [EVENT_STREAM, REQUEST_STREAM]) {
        for (const api_subject of ['STREAM.UPDATE', 'STREAM.PURGE', 'STREAM.DELETE', 'STREAM.MSG.DELETE']) {
          await expect(gw.request(`$JS.API.${api_subject}.${stream}`, utf8ToBytes('{}'), { timeout: 2000 })).rejects.toThrow(refusal);
        }
      }
      // The matcher's user purges the request stream (the leader's purge, request_purge.ts) and no
      // other; a refusal is what the purger names. `keep` everything: nothing goes (a purge with
      // `seq: 1` would remove every message on nats-server 2.9: request_purge.ts).
      const keep_all = { keep: Number.MAX_SAFE_INTEGER };
      expect((await jsm.streams.purge(REQUEST_STREAM, keep_all)).purged).toBe(0);
      const refused_purge = await jsm.streams.purge(EVENT_STREAM, keep_all).then(() => null, (e: unknown) => e);
      expect(String(refused_purge)).toMatch(refusal);
      const gw_purge = await jetstreamManager(gw).then((m) => m.streams.purge(REQUEST_STREAM, keep_all)).then(() => null, (e: unknown) => e);
      expect(describePurgeError(gw_purge)).toMatch(
        /^Permissions Violation for Publish to "\$JS\.API\.STREAM\.PURGE\.RB_REQUESTS".*needs publish permission on \$JS\.API\.STREAM\.PURGE\.RB_REQUESTS \(config\/nats-authorization\.conf\)/);
      // Nor the DA role's poster lease, nor another role's subjects.
      await expect(gw.request('$KV.rb_settlement_poster_lease.leader', utf8ToBytes('g-evil'), { timeout: 2000 })).rejects.toThrow(refusal);
      await expect(gw.request('rb.matcher.status', new Uint8Array(0), { timeout: 2000 })).rejects.toThrow(refusal);
      expect((await jsm.streams.info(EVENT_STREAM)).state.last_seq).toBe(last_seq);

      // The DA role's user cannot inject requests, nor the matcher's forge forced-entry shares.
      const da = await connectAs(c, 'da');
      try {
        await expect(jetstream(da).publish(REQUEST_SUBJECT, new Uint8Array(8), { timeout: 2000 })).rejects.toThrow(refusal);
      } finally {
        await da.close();
      }
      await expect(mt.request('rb.settlement.forced', new Uint8Array(0), { timeout: 2000 })).rejects.toThrow(refusal);
      // While the gateway's user reads what a gateway reads: the event stream by sequence.
      const gw_jsm = await jetstreamManager(gw);
      expect((await gw_jsm.streams.info(EVENT_STREAM)).state.last_seq).toBe(last_seq);
      expect((await gw_jsm.direct.getMessage(EVENT_STREAM, { seq: last_seq }))?.seq).toBe(last_seq);
    } finally {
      await gw.close();
      await mt.close();
    }
  }, 60_000);

  it('the gateway\'s and the DA role\'s users cannot create a consumer: the copy of event messages into rb.requests is refused', async () => {
    const mt = await connectAs(c, 'matcher');
    try {
      const jsm = await jetstreamManager(mt);
      const requests_before = (await jsm.streams.info(REQUEST_STREAM)).state.last_seq;
      expect((await jsm.streams.info(EVENT_STREAM)).state.last_seq).toBeGreaterThan(0);
      const refusal = /Permissions Violation for Publish to "\$JS\.API\.CONSUMER\./;
      for (const role of ['gateway', 'da'] as const) {
        const nc = await connectAs(c, role);
        try {
          // The attack nats-server 2.9 lets through for any user allowed to create a consumer
          // (upstream nats-server#8274): a push consumer delivering the event stream into rb.requests.
          const name = `copy-${role}`;
          const config = { durable_name: name, name, deliver_subject: REQUEST_SUBJECT, deliver_policy: 'all', ack_policy: 'none' };
          const subjects = [`CONSUMER.CREATE.${EVENT_STREAM}`, `CONSUMER.CREATE.${EVENT_STREAM}.${name}`, `CONSUMER.DURABLE.CREATE.${EVENT_STREAM}.${name}`];
          for (const subject of subjects) {
            await expect(nc.request(`$JS.API.${subject}`, utf8ToBytes(JSON.stringify({ stream_name: EVENT_STREAM, config })), { timeout: 2000 }))
              .rejects.toThrow(refusal);
          }
          await expect(jetstreamManager(nc).then((m) => m.consumers.add(EVENT_STREAM, config as Parameters<typeof m.consumers.add>[1])))
            .rejects.toThrow(refusal);
          await expect(jsm.consumers.info(EVENT_STREAM, name)).rejects.toThrow(/consumer not found/);
        } finally {
          await nc.close();
        }
      }
      // Nothing was copied.
      await new Promise((r) => setTimeout(r, 500));
      expect((await jsm.streams.info(REQUEST_STREAM)).state.last_seq).toBe(requests_before);
    } finally {
      await mt.close();
    }
  }, 60_000);
});
