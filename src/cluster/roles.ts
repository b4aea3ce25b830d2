// `ringbook start --role gateway|matcher|da` (or RINGBOOK_ROLE): the cluster roles of the same
// program (docs/scale-out.md). Without a role, main.ts runs the single process (journal on LMDB).
// Cluster settings come from the environment only, so the config file stays the same on every
// machine of a cluster and in the single process.
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomInt } from 'node:crypto';
import { jetstream } from '@nats-io/jetstream';
import { engineConfigOf } from '../config/read.js';
import { ConfigError } from '../config/checks.js';
import { stopFailedStart } from '../util/failed_start_stop.js';
import type { RingbookConfig } from '../config/types.js';
import { RingbookServer } from '../gateway/server.js';
import { JetStreamGatewayBackend } from './gateway_backend.js';
import { ChainReaderLease } from './lease.js';
import { ensureStreams, EVENT_STREAM, REQUEST_PUBLISH_GIVE_UP_MS } from './log_format.js';
import { GatewaySnapshots } from './gateway_snapshots.js';
import { batchReader } from './stream_snapshots.js';
import { ClusterMatcher } from './matcher_role.js';
import { ClusterDa } from './da_role.js';
import { connectCluster, NatsCredentials } from './nats_auth.js';
import { requestStreamTarget, warnShortRequestWindow } from './request_purge.js';

export const ROLES = ['gateway', 'matcher', 'da'] as const;
export type Role = (typeof ROLES)[number];

export interface ClusterSettings {
  /** RINGBOOK_NATS_URLS: every node's client URL, comma separated (clients fail over between them). */
  nats_urls: string[];
  /**
   * RINGBOOK_NATS_USER + RINGBOOK_NATS_PASSWORD, RINGBOOK_NATS_TOKEN, RINGBOOK_NATS_NKEY_SEED_FILE
   * or RINGBOOK_NATS_CREDS_FILE: this role's NATS credentials (nats_auth.ts; none by default).
   */
  nats_credentials: NatsCredentials;
  /** RINGBOOK_NODE_ID: this process's name in message ids, the lease and logs. */
  node_id: string;
  /** RINGBOOK_CLUSTER_REPLICAS: copies of each stream and of the lease (3 survives one NATS node). */
  replicas: number;
  /** RINGBOOK_LEASE_TTL_MS: a dead leader matcher (chain reader, settlement poster) is replaced after about this. */
  lease_ttl_ms: number;
  /** RINGBOOK_BATCH_RECORDS_MAX: most request records in one batch message. */
  batch_records_max: number;
  /** RINGBOOK_REQUEST_MESSAGE_RECORDS_MAX: most request records a gateway packs into one request stream message. */
  request_message_records_max: number;
  /**
   * RINGBOOK_GATEWAY_STATE_ROOTS=1: a gateway also runs the DA thread over the event stream (its
   * own state roots in GET /admin/state), as the first cluster release did; 0 (default): roots
   * come from the matchers and the DA role only.
   */
  gateway_state_roots: boolean;
  /**
   * RINGBOOK_STORE_FAULT_AFTER_MS: a leader whose batch the event stream has not stored for this
   * long reports a store fault; the gateways refuse writes with 503 and GET /health answers 503
   * until it is stored (docs/scale-out.md, "The leader's status message").
   */
  store_fault_after_ms: number;
  /**
   * RINGBOOK_SETTLEMENT_POSTER=1 (a DA role with settlement.rpc_url only): this DA role posts the
   * cluster's roots to the settlement contract (docs/settlement.md, "In a cluster") while it holds
   * the settlement poster lease: several may have it, one posts at a time and another takes over
   * about a lease TTL after its death. A gateway never posts in a cluster.
   */
  settlement_poster: boolean;
  /**
   * RINGBOOK_MATCHER_SNAPSHOT_EVERY_BATCHES (a matcher role): a local engine snapshot in
   * <data_dir>/matcher at every batch id that is a multiple of this, which a restart or a fenced
   * leader resumes from instead of the event stream's start; 0: none written. Default: config
   * snapshots.every_batches (the single process's interval); config snapshots.keep are kept.
   */
  matcher_snapshot_every_batches: number | null;
  /**
   * RINGBOOK_GATEWAY_SNAPSHOT_EVERY_BATCHES (a gateway role): a snapshot of its read model and
   * market data in <data_dir>/gateway at every batch id that is a multiple of this, and at a clean
   * stop, which its next start resumes from instead of the event stream's start
   * (gateway_snapshots.ts); 0: only at a clean stop. Default: config snapshots.every_batches;
   * config snapshots.keep are kept. None with RINGBOOK_GATEWAY_STATE_ROOTS=1 (its DA thread
   * needs the stream from sequence 1).
   */
  gateway_snapshot_every_batches: number | null;
  /**
   * RINGBOOK_REQUEST_PURGE_EVERY_MS (a matcher role): while it leads, it purges the request stream
   * below the position of a batch confirmed more than the stream's duplicate window (plus a
   * quarter) ago, at most this often (request_purge.ts); 0: never (the operator's step by hand).
   */
  request_purge_every_ms: number;
}

/** 1,000 ms: a kill -9'd leader is replaced within ~1.3 s (TTL + a quarter-TTL poll + catch-up), under the 2 s target. */
const LEASE_TTL_MS_DEFAULT = 1000;
/** 1,024 records: 213 KB of inputs per batch message; the leader's batch also waits one R3 round trip. */
const BATCH_RECORDS_MAX_DEFAULT = 1024;
/**
 * 256 records (53 KB): a gateway's turn rarely holds more (the verify pool hands results over in
 * batches of config limits.verify_batch_max), and four such messages fit the default batch of
 * 1,024 records (the leader never splits a message: one larger than its batch forms a batch alone).
 */
const REQUEST_MESSAGE_RECORDS_MAX_DEFAULT = 256;
const PUBLISH_TIMEOUT_MS = 2_000;
/**
 * 10 s: a NATS node's death makes the streams elect leaders (~4 s measured on 2.9), which the
 * leader's retries ride out without turning the gateways unhealthy; a store that fails longer is
 * a fault (the NATS disks full, the streams' quorum lost).
 */
const STORE_FAULT_AFTER_MS_DEFAULT = 10_000;
/**
 * 60 s: one stream info and one purge request a minute cost the leader and the stream's NATS
 * leader next to nothing, and the stream then holds the 2.5-minute delay plus up to a minute of
 * requests (~416 bytes per order per replica). A shorter interval saves little disk: the delay
 * is the bulk of what is kept.
 */
const REQUEST_PURGE_EVERY_MS_DEFAULT = 60_000;
/** A day: a longer interval is the same as never on a busy exchange; 0 turns the purge off. */
const REQUEST_PURGE_EVERY_MS_MAX = 86_400_000;

/** `name`'s whole number in min..max; absent or empty: `fallback` (null: the config's, for the caller to read). */
function intEnv<F extends number | null>(env: NodeJS.ProcessEnv, name: string, fallback: F, min: number, max: number): number | F {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!/^[0-9]+$/.test(v) || n < min || n > max) throw new ConfigError(`${name} must be an integer in ${min}..${max}`);
  return n;
}

export function roleOf(argv: readonly string[], env: NodeJS.ProcessEnv): Role | null {
  const at = argv.indexOf('--role');
  const role = at >= 0 ? argv[at + 1] : env.RINGBOOK_ROLE;
  if (role === undefined || role === '' || role === 'single') return null;
  if (!(ROLES as readonly string[]).includes(role)) throw new ConfigError(`--role must be one of ${ROLES.join(', ')} (or absent: the single process)`);
  return role as Role;
}

export function clusterSettings(role: Role, env: NodeJS.ProcessEnv = process.env): ClusterSettings {
  const urls = (env.RINGBOOK_NATS_URLS ?? '').split(',').map((u) => u.trim()).filter((u) => u !== '');
  if (urls.length === 0) throw new ConfigError('the cluster roles need RINGBOOK_NATS_URLS (nats://host:port,...)');
  for (const u of urls) {
    // A user:password@ in the URL would be logged with it (the start line names the URLs).
    if (/^nats:\/\/[^\s,/]*@/.test(u)) throw new ConfigError('RINGBOOK_NATS_URLS: no credentials in the URLs (they are logged): use RINGBOOK_NATS_USER/RINGBOOK_NATS_PASSWORD or RINGBOOK_NATS_TOKEN');
    if (!/^nats:\/\/[^\s,]+:[0-9]+$/.test(u)) throw new ConfigError(`RINGBOOK_NATS_URLS: ${u} is not nats://host:port`);
  }
  // A gateway or matcher never posts roots (docs/settlement.md, "Roots in a cluster"): the flag there is a mistake.
  if (role !== 'da' && intEnv(env, 'RINGBOOK_SETTLEMENT_POSTER', 0, 0, 1) === 1) {
    throw new ConfigError('RINGBOOK_SETTLEMENT_POSTER=1 is for a DA role only (--role da): in a cluster only a DA role posts roots');
  }
  const node_id = env.RINGBOOK_NODE_ID ?? `${role}-${os.hostname()}-${process.pid}`;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(node_id)) throw new ConfigError('RINGBOOK_NODE_ID must be 1..64 of A-Z a-z 0-9 _ -');
  return {
    nats_urls: urls,
    nats_credentials: NatsCredentials.fromEnv(env),
    node_id,
    replicas: intEnv(env, 'RINGBOOK_CLUSTER_REPLICAS', 3, 1, 5),
    lease_ttl_ms: intEnv(env, 'RINGBOOK_LEASE_TTL_MS', LEASE_TTL_MS_DEFAULT, 200, 60_000),
    batch_records_max: intEnv(env, 'RINGBOOK_BATCH_RECORDS_MAX', BATCH_RECORDS_MAX_DEFAULT, 1, 16_384),
    request_message_records_max: intEnv(env, 'RINGBOOK_REQUEST_MESSAGE_RECORDS_MAX', REQUEST_MESSAGE_RECORDS_MAX_DEFAULT, 1, 16_384),
    gateway_state_roots: intEnv(env, 'RINGBOOK_GATEWAY_STATE_ROOTS', 0, 0, 1) === 1,
    store_fault_after_ms: intEnv(env, 'RINGBOOK_STORE_FAULT_AFTER_MS', STORE_FAULT_AFTER_MS_DEFAULT, 0, 600_000),
    settlement_poster: intEnv(env, 'RINGBOOK_SETTLEMENT_POSTER', 0, 0, 1) === 1,
    matcher_snapshot_every_batches: intEnv(env, 'RINGBOOK_MATCHER_SNAPSHOT_EVERY_BATCHES', null, 0, Number.MAX_SAFE_INTEGER),
    gateway_snapshot_every_batches: intEnv(env, 'RINGBOOK_GATEWAY_SNAPSHOT_EVERY_BATCHES', null, 0, Number.MAX_SAFE_INTEGER),
    request_purge_every_ms: intEnv(env, 'RINGBOOK_REQUEST_PURGE_EVERY_MS', REQUEST_PURGE_EVERY_MS_DEFAULT, 0, REQUEST_PURGE_EVERY_MS_MAX),
  };
}

/**
 * The cluster settings against the config, checked with them: before the data dir is made or
 * written (src/main.ts), as a bad setting alone is.
 */
export function checkRoleConfig(role: Role, s: ClusterSettings, cfg: RingbookConfig): void {
  if (role === 'da' && s.settlement_poster && cfg.settlement.rpc_url === null) {
    throw new ConfigError('RINGBOOK_SETTLEMENT_POSTER=1 needs settlement.rpc_url in the config');
  }
}

export interface RunningRole {
  /** The HTTP port (the gateway's API; the matcher's /status). */
  port: number;
  /** A gateway's health listener (config server.health_port; null without one). */
  health_port?: number | null;
  stop(): Promise<void>;
}

/** A gateway: the front of the single process with its matcher behind the replicated logs. */
export async function startGateway(
  cfg: RingbookConfig, s: ClusterSettings, secrets: { admin_token: string; operator_key: string }, snapshots_dir: string | null, stop_requested?: AbortSignal,
): Promise<RunningRole> {
  // `snapshots_dir`: its roleStoreDir, made and locked by the caller (a second gateway on the data
  // dir stops there, before it connects), null for a gateway with its own DA thread.
  const nc = await connectCluster(s.nats_urls, s.nats_credentials, `ringbook-${s.node_id}`);
  const jsm = await ensureStreams(nc, { replicas: s.replicas });
  // Its retries are what a short request stream window would store twice: said at its start.
  await warnShortRequestWindow(requestStreamTarget(jsm), `gateway ${s.node_id}`);
  const snapshots = new GatewaySnapshots({
    dir: snapshots_dir, every_batches: s.gateway_snapshot_every_batches ?? cfg.snapshots.every_batches, keep: cfg.snapshots.keep,
  }, s.node_id);
  const resume = await snapshots.resume(batchReader(jsm), (await jsm.streams.info(EVENT_STREAM)).state.last_seq, cfg.assets.length);
  const backend = new JetStreamGatewayBackend(nc, jetstream(nc), jsm, {
    gateway_id: s.node_id, publish_timeout_ms: PUBLISH_TIMEOUT_MS, publish_give_up_ms: REQUEST_PUBLISH_GIVE_UP_MS,
    message_records_max: s.request_message_records_max, resume, onBatch: (h, seq) => snapshots.noteBatch(h, seq),
  });
  // Each gateway numbers its requests in its own 2^32 range (a random one of 2^20): events
  // carry the seq back, and every gateway reads every event.
  const seq_base = randomInt(1, 1 << 20) * 2 ** 32;
  // One gateway at a time reads the settlement contract's events (docs/settlement.md, "Roots in a
  // cluster"): the holder of this lease, replaced about a lease TTL after its death.
  const chain_reader = cfg.settlement.rpc_url === null ? undefined : await ChainReaderLease.start(nc, s.node_id, s.lease_ttl_ms, s.replicas);
  const server = new RingbookServer({ cfg, ...secrets, backend, seq_base, state_roots: s.gateway_state_roots, chain_reader, front_snapshots: snapshots });
  let port: number;
  try {
    port = await server.start(stop_requested);
  } catch (e) {
    // The lease's renewal timer would keep the process alive and the lease held.
    if (chain_reader !== undefined) await stopFailedStart(() => chain_reader.stop(), e);
    await stopFailedStart(() => snapshots.close(), e);
    throw e;
  }
  return {
    port,
    health_port: server.health_port,
    stop: async () => {
      await server.stop();
      // After the read model took its last batch: a snapshot of it, which the next start resumes from.
      await snapshots.stop();
      await chain_reader?.stop();
      await nc.drain();
    },
  };
}

/**
 * The directory a role keeps its store in and locks (data_dir_lock.ts), so that it is one role's
 * alone: a matcher's snapshots (<data>/matcher), a DA role's store (<data>/da), a gateway's
 * snapshots (<data>/gateway). src/main.ts makes and locks it before the role starts (and before a
 * secret is written): a second role of a kind on the same data dir stops there, before it reads or
 * writes its store, and a start that fails removes it again if it was new (start_claim.ts).
 */
export function roleStoreDir(role: 'matcher' | 'da', data_dir: string): string;
export function roleStoreDir(role: Role, data_dir: string, gateway_state_roots?: boolean): string | null;
export function roleStoreDir(role: Role, data_dir: string, gateway_state_roots = false): string | null {
  // A gateway's snapshots (h31g); one with its own DA thread reads from sequence 1 (the thread
  // needs every batch) and keeps none.
  if (role === 'gateway') return gateway_state_roots ? null : path.join(data_dir, 'gateway');
  return path.join(data_dir, role === 'matcher' ? 'matcher' : 'da');
}

/**
 * A matcher (leader or hot standby) with its /status on the configured HTTP port. `snapshots_dir`:
 * its roleStoreDir, made and locked by the caller.
 */
export async function startMatcher(cfg: RingbookConfig, s: ClusterSettings, snapshots_dir: string): Promise<RunningRole> {
  const matcher = new ClusterMatcher({
    nats_urls: s.nats_urls, nats_credentials: s.nats_credentials, node_id: s.node_id, engine_config: engineConfigOf(cfg), replicas: s.replicas,
    lease_ttl_ms: s.lease_ttl_ms, batch_records_max: s.batch_records_max, store_fault_after_ms: s.store_fault_after_ms,
    // Test seam only (test/cluster/store_fault.test.ts), the single process's journal's.
    fault_file: process.env.RINGBOOK_TEST_JOURNAL_FAULT_FILE ?? null,
    snapshots: {
      dir: snapshots_dir, every_batches: s.matcher_snapshot_every_batches ?? cfg.snapshots.every_batches,
      keep: cfg.snapshots.keep,
    },
    request_purge_every_ms: s.request_purge_every_ms,
  });
  const status = http.createServer((req, res) => {
    const ok = req.method === 'GET' && req.url === '/status';
    res.writeHead(ok ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ok ? matcher.statusNow() : { error: { code: 'NOT_FOUND', message: 'only GET /status' } }));
  });
  let port: number;
  try {
    await matcher.start();
    port = await new Promise<number>((resolve, reject) => {
      status.once('error', reject);
      status.listen(cfg.server.port, cfg.server.host, () => resolve((status.address() as { port: number }).port));
    });
  } catch (e) {
    // NATS unreachable, the port in use: the lease handed over and the snapshot writer ended
    // before the start fails (and a failed first start empties the directory, src/main.ts).
    await stopFailedStart(() => matcher.stop(), e);
    throw e;
  }
  return {
    port,
    stop: async () => {
      status.close();
      await matcher.stop();
    },
  };
}

/**
 * The DA publisher: the event stream into the DA store at `da_dir` (its roleStoreDir, made and
 * locked by the caller), served on the configured HTTP port.
 */
export async function startDa(cfg: RingbookConfig, s: ClusterSettings, secrets: { operator_key: string }, da_dir: string): Promise<RunningRole> {
  const da = new ClusterDa({ nats_urls: s.nats_urls, nats_credentials: s.nats_credentials, node_id: s.node_id, replicas: s.replicas, cfg, da_dir,
    settlement_poster: s.settlement_poster ? { operator_key: secrets.operator_key } : null, lease_ttl_ms: s.lease_ttl_ms,
  });
  let port: number;
  try {
    port = await da.start();
  } catch (e) {
    // The DA store closed before the start fails (and a failed first start empties it, src/main.ts).
    await stopFailedStart(() => da.stop(), e);
    throw e;
  }
  return { port, stop: () => da.stop() };
}
