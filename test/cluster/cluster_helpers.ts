// Set-up shared by the cluster tests: a real 3-node JetStream cluster (LocalNatsCluster), matcher
// and gateway roles as real processes (the harness's startServer with RINGBOOK_ROLE), their
// /status, bounded waits, and a load of signed orders from several wallets.
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { LocalNatsCluster, type LocalNatsAuth } from '../../src/cluster/local_nats.js';
import type { Role } from '../../src/cluster/roles.js';
import { batchHeaders, batchMessageId, EVENT_STREAM, EVENT_SUBJECT, readBatchHeader, type BatchHeader } from '../../src/cluster/log_format.js';
import type { MatcherStatus } from '../../src/cluster/matcher_role.js';
import type { DaRoleStatus } from '../../src/cluster/da_role.js';
import { api, deposit, request, startServer, Wallet, type ApiResponse, type StartedServer } from '../server/harness.js';

/** One operator key for every gateway of a cluster (each signs the same operator rules). */
const OPERATOR_KEY = '0x' + '42'.repeat(32);
/** Short enough that a kill -9'd leader is replaced well within the 2 s target. */
export const LEASE_TTL_MS = 1000;
export const MARKET = 'ETH-USDC';
/** 1,500 USDC: on the tick; bids under it never meet an ask in these tests. */
export const P = 1_500_000_000;
export const TICK = 10_000;

export interface TestCluster {
  nats: LocalNatsCluster;
  matchers: Map<string, StartedServer>;
  gateways: StartedServer[];
  /** The DA publisher roles started (`--role da`). */
  das: StartedServer[];
  /** `env`: extra variables (a test seam, RINGBOOK_STORE_FAULT_AFTER_MS). */
  startMatcher(id: string, env?: Record<string, string>): Promise<StartedServer>;
  /**
   * `env`: extra variables (a restart on an existing data dir: RINGBOOK_DATA_DIR, RINGBOOK_CONFIG;
   * the settlement poster's RINGBOOK_SETTLEMENT_POSTER); `config`: merged over the harness's.
   */
  startDa(id: string, env?: Record<string, string>, config?: Record<string, unknown>): Promise<StartedServer>;
  /**
   * `config`: merged over the harness's (a health listener: `{ server: { health_port: 0 } }`);
   * `env`: extra variables (RINGBOOK_GATEWAY_STATE_ROOTS, a chain link's RINGBOOK_OPERATOR_KEY).
   */
  startGateway(id: string, config?: Record<string, unknown>, env?: Record<string, string>): Promise<StartedServer>;
  stop(): Promise<void>;
}

/** A cluster whose NATS nodes require credentials (test/cluster/nats_auth.test.ts): the nodes' block, each role's variables. */
export interface TestClusterAuth {
  nats: LocalNatsAuth;
  /** Each role's extra environment: its RINGBOOK_NATS_* credentials. */
  roles: Record<Role, Record<string, string>>;
}

export async function startTestCluster(auth: TestClusterAuth | null = null): Promise<TestCluster> {
  const nats = await LocalNatsCluster.start(3, 'nats-server', auth?.nats ?? null);
  const env = {
    RINGBOOK_NATS_URLS: nats.urls().join(','), RINGBOOK_LEASE_TTL_MS: String(LEASE_TTL_MS), RINGBOOK_OPERATOR_KEY: OPERATOR_KEY,
  };
  const creds = (role: Role): Record<string, string> => auth?.roles[role] ?? {};
  const c: TestCluster = {
    nats,
    matchers: new Map(),
    gateways: [],
    das: [],
    startMatcher: async (id, extra = {}) => {
      const m = await startServer({ env: { ...env, ...creds('matcher'), ...extra, RINGBOOK_ROLE: 'matcher', RINGBOOK_NODE_ID: id } });
      c.matchers.set(id, m);
      return m;
    },
    startGateway: async (id, config, extra = {}) => {
      const g = await startServer({ config, env: { ...env, ...creds('gateway'), ...extra, RINGBOOK_ROLE: 'gateway', RINGBOOK_NODE_ID: id } });
      c.gateways.push(g);
      return g;
    },
    startDa: async (id, extra = {}, config) => {
      const d = await startServer({ config, env: { ...env, ...creds('da'), ...extra, RINGBOOK_ROLE: 'da', RINGBOOK_NODE_ID: id } });
      c.das.push(d);
      return d;
    },
    stop: async () => {
      await Promise.all([...c.gateways, ...c.das, ...c.matchers.values()].map((s) => s.stop('SIGKILL')));
      await nats.stop();
    },
  };
  return c;
}

export async function matcherStatus(m: StartedServer): Promise<MatcherStatus> {
  const r = await request('GET', m.url + '/status');
  if (r.status !== 200) throw new Error(`matcher /status: ${r.status} ${r.text}`);
  return r.body as MatcherStatus;
}

export async function daStatus(d: StartedServer): Promise<DaRoleStatus> {
  const r = await request('GET', d.url + '/status');
  if (r.status !== 200) throw new Error(`da /status: ${r.status} ${r.text}`);
  return r.body.data as DaRoleStatus;
}

/** Polls `check` every `every_ms` until it returns a value (not undefined) or `ms` pass. */
/** Waits (at most 10 s) until matcher `m` leads with genesis (batch 0) published: the first matcher of a test cluster. */
export async function leadingFromGenesis(m: StartedServer): Promise<MatcherStatus> {
  return waitFor('the first matcher to lead from genesis', 10_000, async () => {
    const s = await matcherStatus(m);
    return s.role === 'leader' && s.batch_id === 0 ? s : undefined;
  });
}

export async function waitFor<T>(what: string, ms: number, check: () => Promise<T | undefined>, every_ms = 20): Promise<T> {
  const deadline = Date.now() + ms;
  let last_error: unknown = null;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (e) {
      last_error = e;
    }
    if (Date.now() >= deadline) throw new Error(`waited ${ms} ms for ${what}${last_error === null ? '' : `: ${String(last_error)}`}`);
    await new Promise((r) => setTimeout(r, every_ms));
  }
}

/** A request that fails the test instead of hanging it. */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    p.then((v) => {
      clearTimeout(t);
      resolve(v);
    }, (e: unknown) => {
      clearTimeout(t);
      reject(e);
    });
  });
}

export async function fundedWallet(g: StartedServer): Promise<Wallet> {
  const w = Wallet.random();
  for (const [asset, amount] of [['ETH', '10'], ['USDC', '1000000']]) {
    const r = await deposit(g, w.address, asset, amount);
    if (r.status !== 200) throw new Error(`deposit: ${r.status} ${r.text}`);
  }
  return w;
}

export interface Answered {
  address: string;
  order_id: number;
  gateway: number;
  at_ms: number;
}

/**
 * Each wallet sends resting bids one at a time (the next once the previous is answered),
 * alternating gateways, until `running()` is false. Every answer is recorded; a request with
 * no answer within `answer_ms` fails the load.
 */
export async function orderLoad(wallets: Wallet[], gateways: StartedServer[], running: () => boolean, answer_ms: number,
  answered: Answered[] = []): Promise<Answered[]> {
  await Promise.all(wallets.map(async (w, k) => {
    for (let i = 0; running(); i++) {
      const gi = (k + i) % gateways.length;
      const price = P - (1 + ((k * 97 + i) % 500)) * TICK;
      const r: ApiResponse = await withTimeout(
        api(gateways[gi].url).post('/orders', w.order({ market_id: MARKET, side: 'bid', price, quantity: 100 })), answer_ms, `order ${i} of ${w.address}`);
      if (r.status !== 200) throw new Error(`order refused: ${r.status} ${r.text}`);
      answered.push({ address: w.address, order_id: Number(r.body.data.order_id), gateway: gi, at_ms: Date.now() });
    }
  }));
  return answered;
}

/**
 * `orderLoad` for as long as `body` runs: `body` gets a stop() that ends the load and returns what
 * was answered, and the answers so far (a live array: a test waits on their count, not a sleep). However `body` ends, the load stops: a failed test must not leave it sending into
 * the next test, which shares the cluster (one loaded run's first failure, a /status request
 * that hung up, left it running and three later tests then failed on the batches it kept adding).
 */
export async function withOrderLoad<T>(wallets: Wallet[], gateways: StartedServer[], answer_ms: number,
  body: (stop: () => Promise<Answered[]>, answered_so_far: readonly Answered[]) => Promise<T>): Promise<T> {
  let running = true;
  const answered: Answered[] = [];
  const load = orderLoad(wallets, gateways, () => running, answer_ms, answered);
  const stop = (): Promise<Answered[]> => {
    running = false;
    return load;
  };
  try {
    return await body(stop, answered);
  } finally {
    running = false;
    // Settled either way; if `body` failed first its error is the one reported.
    await load.catch(() => undefined);
  }
}

/** The order ids a gateway's read model holds for `address` (all statuses). */
export async function orderIdsOf(g: StartedServer, address: string): Promise<number[]> {
  const r = await api(g.url).get(`/account/${address}/orders?status=all&limit=1000`);
  if (r.status !== 200) throw new Error(`orders: ${r.status} ${r.text}`);
  return (r.body.data as { order_id: number | string }[]).map((o) => Number(o.order_id)).sort((a, b) => a - b);
}

/** Waits until every live matcher reports the same last batch, then returns their statuses. */
export async function settledMatchers(matchers: StartedServer[], ms: number): Promise<MatcherStatus[]> {
  let last: MatcherStatus[] = [];
  return waitFor('the matchers to agree on their last batch', ms, async () => {
    const s = await Promise.all(matchers.map(matcherStatus));
    last = s;
    return s.every((x) => x.batch_id === s[0].batch_id && x.batch_id >= 0) ? s : undefined;
  }, 50).catch((e: unknown) => {
    throw new Error(`${String(e)}; last statuses: ${JSON.stringify(last)}`);
  });
}

/** Tries of one read of the event stream, a lease TTL / 10 apart: 30 TTLs (JetStream answers "temporarily unavailable" during an election). */
const STREAM_READ_TRIES = 300;

/**
 * Every batch header of the event stream in sequence order, read with direct gets over `nc`;
 * each read retried up to STREAM_READ_TRIES times, a lease TTL / 10 apart (a node just resumed
 * or restarted answers "JetStream system temporarily unavailable", or lags, for a moment).
 */
export async function eventStreamBatches(nc: NatsConnection): Promise<BatchHeader[]> {
  return (await eventStreamStored(nc)).map((b) => b.header);
}

/** A batch of the event stream and when the stream stored it (JetStream's Nats-Time-Stamp, the host's wall clock). */
export interface StoredBatch {
  header: BatchHeader;
  stored_ms: number;
}

/** eventStreamBatches, each with its stored time. */
export async function eventStreamStored(nc: NatsConnection): Promise<StoredBatch[]> {
  const retried = async <T>(what: string, read: () => Promise<T>): Promise<T> => {
    for (let i = 1; ; i++) {
      try {
        return await read();
      } catch (e) {
        if (i >= STREAM_READ_TRIES) throw new Error(`${what}: ${String(e)} (${i} tries)`);
        await new Promise((r) => setTimeout(r, LEASE_TTL_MS / 10));
      }
    }
  };
  // Without its account check: a JetStream request that a node just resumed answers first with
  // "temporarily unavailable" (seen for over 5 s after a SIGCONT).
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  const last = (await retried('event stream info', () => jsm.streams.info(EVENT_STREAM))).state.last_seq;
  const out: StoredBatch[] = [];
  for (let seq = 1; seq <= last; seq++) {
    // A direct get: any replica answers (the stream API's get needs its leader, and a node just
    // resumed answers it first with "temporarily unavailable" for seconds); a replica that has not
    // caught up yet answers null, which is retried too.
    const m = await retried(`event stream sequence ${seq}`, async () => {
      const got = await jsm.direct.getMessage(EVENT_STREAM, { seq });
      if (got === null) throw new Error(`no message at sequence ${seq}`);
      return got;
    });
    out.push({ header: readBatchHeader(m.header, m.data.length), stored_ms: m.time.getTime() });
  }
  return out;
}

/**
 * Publishes a forged batch after the event stream's last (a writer that is not a Ringbook matcher,
 * or a leader with a bug): the next batch number, no inputs, no events and a made-up root, fenced
 * like a leader's write. Returns the last real batch's header and the forged one's.
 */
export async function publishForgedBatch(nc: NatsConnection): Promise<{ last: BatchHeader; forged: BatchHeader }> {
  const jsm = await jetstreamManager(nc);
  const last_seq = (await jsm.streams.info(EVENT_STREAM)).state.last_seq;
  const last = await jsm.streams.getMessage(EVENT_STREAM, { seq: last_seq });
  const h = readBatchHeader(last!.header, last!.data.length);
  const forged = { ...h, batch_id: h.batch_id + 1, time_ms: h.time_ms + 1, input_records: 0, state_root: '0x' + 'ab'.repeat(32), leader: 'forger' };
  await jetstream(nc).publish(EVENT_SUBJECT, new Uint8Array(0), {
    msgID: batchMessageId(forged.batch_id), expect: { lastSequence: last_seq }, headers: batchHeaders(forged),
  });
  return { last: h, forged };
}
