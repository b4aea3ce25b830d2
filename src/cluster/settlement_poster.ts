// Settlement roots from a cluster (docs/settlement.md, "In a cluster"; docs/scale-out.md): the DA
// role with RINGBOOK_SETTLEMENT_POSTER=1 posts every batch's state and fills roots to the contract,
// from its own DA store: roots it computed itself from the event stream and compared with the
// leader's header (da_role.ts), never the leader's word alone. The posting code is the single
// process's (src/settlement/roots_poster.ts): the same transactions, the same forced count, the
// same batch request each round while a taken-in entry waits uncounted with every batch posted.
//
// The forced count needs to know which batch took each queue entry in, which only the gateway
// that handled the entry knows (its chain link submitted it, or refused it before the engine). So
// a cluster gateway's chain link shares it each round while the contract has not counted the
// entries: a plain NATS message on `rb.settlement.forced` (not acknowledged; the next round sends it
// again), a JSON body `{"version":1,"gateway":"<node id>","from":<queue id>,"batches":[...]}`:
// entries from, from+1, ... were taken in by those batches. Every DA role hears it; only the poster
// uses it. An entry reported with two batches (two gateways that both read the chain, or one
// restarted and refused by the engine as a repeated envelope nonce) keeps the later one: counting
// late claims nothing the batches did not do; counting early would.
//
// One poster at a time: only a DA role with RINGBOOK_SETTLEMENT_POSTER=1 (and settlement.rpc_url)
// may post, and of those only the holder of the settlement poster lease (lease.ts
// SettlementPosterLease; a gateway never posts in a cluster). The others are standbys: they keep
// their stores and compare roots but send nothing to the chain; one takes the lease about a TTL
// after the holder's death and posts from the contract's lastBatchId/forcedProcessed on (a
// restart's path). A holder checks the lease's validity again right before each transaction, so
// one whose lease lapsed by its own clock sends none. Before (branch h28p, 2026-11-29) every such
// role posted: two raced and the second transaction of each range reverted, and with one, roots
// waited for its restart.
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { SettlementSettings } from '../config/types.js';
import { SettlementContract } from '../settlement/contract.js';
import { ForcedCount } from '../settlement/forced_count.js';
import { RootsPoster, type RootsSource } from '../settlement/roots_poster.js';
import { isEndpointFailure, JsonRpc } from '../settlement/rpc.js';
import { componentLog } from '../util/log.js';
import { FORCED_SHARE_MAX } from '../gateway/chain_link.js';
import { sendBatchRequest } from './batch_request.js';
import { PosterHandOver, type LeaseYield, type PosterLease } from './poster_hand_over.js';

export { BEHIND_GAIN_BATCHES_PER_S_MIN, BEHIND_YIELD_MS_DEFAULT, RPC_FAIL_YIELD_MS_DEFAULT, type PosterLease } from './poster_hand_over.js';

export const FORCED_SHARE_SUBJECT = 'rb.settlement.forced';
export const FORCED_SHARE_VERSION = 1;
/** Most entries one share carries (the gateway's chain link sends at most this many). */
export const FORCED_SHARE_ENTRIES_MAX = FORCED_SHARE_MAX;
/**
 * Largest share body read: 512 batch ids of at most 16 digits and their commas, the node id, the
 * queue id and the keys fit in 10 KB; a larger body is refused before JSON.parse.
 */
export const FORCED_SHARE_BYTES_MAX = 16 * 1024;
/**
 * Queue ids the poster remembers: from the contract's count (as last read or posted) up to this
 * many after it. A gateway shares from the count it read, at most FORCED_SHARE_ENTRIES_MAX
 * entries; the rest of an entry shared past the window is shared again once the count moves (each
 * round until counted), so nothing is lost and memory stays bounded whatever the messages say.
 */
export const FORCED_WINDOW_ENTRIES = 2 * FORCED_SHARE_ENTRIES_MAX;
const NODE_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const log = componentLog('cluster');

export interface ForcedShareMessage {
  gateway: string;
  from: number;
  batches: readonly number[];
}

export function encodeForcedShare(m: ForcedShareMessage): Uint8Array {
  return Buffer.from(JSON.stringify({ version: FORCED_SHARE_VERSION, gateway: m.gateway, from: m.from, batches: m.batches }));
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** The share in a message body; null for another version; throws on a malformed version 1. */
export function readForcedShare(data: Uint8Array): ForcedShareMessage | null {
  if (data.length > FORCED_SHARE_BYTES_MAX) throw new Error(`forced share: ${data.length} bytes, more than ${FORCED_SHARE_BYTES_MAX}`);
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    throw new Error('forced share: not JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('forced share: not an object');
  const o = v as Record<string, unknown>;
  if (o.version !== FORCED_SHARE_VERSION) return null;
  if (typeof o.gateway !== 'string' || !NODE_NAME.test(o.gateway)) throw new Error('forced share: gateway is not a node id');
  if (!isCount(o.from)) throw new Error('forced share: from is not a queue id');
  const b = o.batches;
  if (!Array.isArray(b) || b.length === 0 || b.length > FORCED_SHARE_ENTRIES_MAX || !b.every(isCount)) {
    throw new Error(`forced share: batches must be 1..${FORCED_SHARE_ENTRIES_MAX} batch ids`);
  }
  if (!Number.isSafeInteger(o.from + b.length)) throw new Error('forced share: queue ids past 2^53');
  return { gateway: o.gateway, from: o.from, batches: b as number[] };
}

/** What the poster did (the DA role's GET /status `settlement`). */
export interface SettlementPosterStatus {
  /**
   * 'held': this role holds the settlement poster lease and posts; 'standby': another DA role
   * does (or NATS did not confirm this role's lease in time), and this one sends nothing to the
   * chain. As of the last round.
   */
  poster_lease: 'held' | 'standby';
  /** Times this role started posting: took the poster lease (the first take counts) or its validity came back. */
  poster_takeovers: number;
  /** The contract's last posted batch as last read or posted (-1: not read yet; a standby reads nothing). */
  roots_posted_batch_id: number;
  forced_processed: number;
  /** Batch requests sent: every batch posted, a taken-in entry uncounted. */
  batch_requests: number;
  shares_received: number;
  /** Malformed or of another version (the first logged). */
  shares_refused: number;
  /**
   * Entries of well-formed shares not taken (the first logged): outside the window of queue ids
   * (FORCED_WINDOW_ENTRIES from the contract's count; none before the count is read), or of a
   * batch past the one after this role's last postable batch. A gateway shares them again.
   */
  share_entries_ignored: number;
  /** Queue entries remembered with their batch (at most FORCED_WINDOW_ENTRIES). */
  forced_remembered: number;
  /**
   * The last batch this role may post, as of the last round: published, compared with the
   * leader's header, and before the first mismatch (-1: no round yet). Posting stops here.
   */
  postable_batch_id: number;
  /**
   * The first batch whose roots differed from the leader's header (null: none): nothing from it on
   * is posted, whatever comes after, until the operator decides (docs/settlement.md, "Roots in a
   * cluster"). Logged once at error level when the poster first sees it.
   */
  stopped_at_mismatch_batch_id: number | null;
  /**
   * The contract's last batch when its roots on chain differed from this role's (null: none): a
   * chain holding another history is not extended (roots_poster.ts check_chain_base). For good,
   * logged once at error level.
   */
  chain_differs_batch_id: number | null;
  /**
   * Why this role handed the poster lease over and does not take it (null: it takes part).
   * 'stopped_at_mismatch' / 'chain_differs' (the two fields above): for good (until a restart),
   * once it posted what it still could.
   * 'behind': its postable batch was short of `stream_batch_id` and gained on the stream less
   * than BEHIND_GAIN_BATCHES_PER_S_MIN over behind_yield_ms (stuck or trickling; a replay keeps
   * the lease); it takes part again once it reaches that batch.
   * 'rpc_failing': every round of its holding spell failed on its RPC endpoint (no connection, no
   * answer, HTTP 429 or 5xx, a provider's "internal error"; not a revert) for rpc_fail_yield_ms
   * from the first failed round's start; it takes part again once the endpoint answers
   * eth_blockNumber (asked every tenth of the bound).
   */
  lease_yielded: LeaseYield | null;
  /** When it stepped out (epoch ms; null while it takes part). */
  lease_yielded_at_ms: number | null;
  /** The event stream's newest batch as the holder last read it (-1: not read; a standby reads none). */
  stream_batch_id: number;
  /**
   * The last failed round's error; while out for rpc_failing, the last failed probe's (the
   * endpoint's state now). Null once a round succeeds or the endpoint answers a probe again.
   */
  last_error: string | null;
  /** When last_error was last seen (epoch ms; null with it): a stale one shows its age. */
  last_error_at_ms: number | null;
}

/** The roots the poster takes, as the DA role wires them (LeaderCheckedRoots, checked_roots.ts). */
export interface CheckedRootsSource extends RootsSource {
  /**
   * The first batch whose roots differed from the leader's (-1: none); `latest()` stays before
   * it. Absent: a source compared with nothing (a test's store), which never stops.
   */
  readonly first_mismatch?: number;
}

export interface SettlementPosterOptions {
  nc: NatsConnection;
  node_id: string;
  settings: SettlementSettings;
  operator_key: string;
  /** The DA role's store, up to the batches it may post (see da_role.ts). */
  roots: CheckedRootsSource;
  /**
   * The settlement poster lease (lease.ts SettlementPosterLease): the role posts only while it
   * holds it. Absent: always posts (a test's poster on its own).
   */
  lease?: PosterLease;
  /**
   * The event stream's newest batch (da_role.ts reads RB_EVENTS' last message): a holder short of
   * it that does not gain on it over `behind_yield_ms` hands the lease over. Absent: never measured.
   */
  newest_batch?: () => Promise<number>;
  /** Default BEHIND_YIELD_MS_DEFAULT (poster_hand_over.ts). */
  behind_yield_ms?: number;
  /** The hand-over's monotonic clock in ms (default performance.now; a test's clock). */
  now_ms?: () => number;
  /** Default RPC_FAIL_YIELD_MS_DEFAULT (poster_hand_over.ts). */
  rpc_fail_yield_ms?: number;
}

export class SettlementPoster {
  private readonly forced = new ForcedCount();
  private readonly poster: RootsPoster;
  private sub: Subscription | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  /** When this role hands the poster lease over (null: no lease). */
  private readonly hand_over: PosterHandOver | null;
  /** When the endpoint last answered a call (the hand-over's clock; -inf: never). */
  private answered_ms = Number.NEGATIVE_INFINITY;
  readonly status: SettlementPosterStatus = {
    poster_lease: 'standby', poster_takeovers: 0, roots_posted_batch_id: -1, forced_processed: -1, batch_requests: 0,
    shares_received: 0, shares_refused: 0, share_entries_ignored: 0, forced_remembered: 0, postable_batch_id: -1,
    stopped_at_mismatch_batch_id: null, chain_differs_batch_id: null, lease_yielded: null, lease_yielded_at_ms: null, stream_batch_id: -1,
    last_error: null, last_error_at_ms: null,
  };

  constructor(private readonly o: SettlementPosterOptions) {
    const s = o.settings;
    if (s.rpc_url === null) throw new Error('the settlement poster needs settlement.rpc_url');
    const rpc = new JsonRpc(s.rpc_url, () => {
      this.answered_ms = this.hand_over?.now() ?? 0;
    });
    this.poster = new RootsPoster({
      contract: new SettlementContract(rpc, s.contract),
      roots: o.roots,
      forced: this.forced,
      requestBatch: () => this.requestBatch(),
      stopped: () => (o.roots.first_mismatch ?? -1) >= 0,
      check_chain_base: true,
      may_send: () => this.holding(),
      operator_key: o.operator_key,
      roots_per_tx_max: s.roots_per_tx_max,
    });
    this.hand_over = o.lease === undefined ? null : new PosterHandOver({
      node_id: o.node_id, lease: o.lease, latest: () => o.roots.latest(), posted_batch_id: () => this.poster.posted_batch_id,
      newest_batch: o.newest_batch, behind_yield_ms: o.behind_yield_ms, now_ms: o.now_ms,
      probe_endpoint: () => rpc.blockNumber(), rpc_fail_yield_ms: o.rpc_fail_yield_ms,
    }, this.status);
  }

  start(): void {
    this.sub = this.o.nc.subscribe(FORCED_SHARE_SUBJECT, {
      callback: (err, msg) => {
        if (err === null) this.heard(msg.data);
      },
    });
    const tick = (): void => {
      if (this.stopped) return;
      this.running = this.round().finally(() => {
        this.running = null;
        if (!this.stopped) this.timer = setTimeout(tick, this.o.settings.poll_ms);
      });
    };
    tick();
  }

  /** Whether this role posts now: it holds the poster lease (always, without one). */
  private holding(): boolean {
    return this.o.lease === undefined || this.o.lease.holding();
  }

  /**
   * One round of the poster (every poll_ms once started); its failure is logged when it changes,
   * never thrown. A standby's round only notes where it stands: no RPC call, no batch request.
   */
  async round(): Promise<void> {
    // The rpc_failing window starts when the round's endpoint went unanswered: its start, or its
    // last answer if later (a hung endpoint fails a round only at its timeout; a long receipt
    // wait is answered all along).
    const started_ms = this.hand_over?.now() ?? 0;
    const holding = this.holding();
    this.status.poster_lease = holding ? 'held' : 'standby';
    this.status.poster_takeovers = this.o.lease?.takeovers ?? 0;
    if (!holding) {
      this.noteStop();
      await this.hand_over?.afterRound({ unanswered_since_ms: started_ms, endpoint_failed: false });
      return;
    }
    const failing = this.status.last_error;
    let endpoint_failed = false;
    try {
      await this.poster.post();
      if (failing !== null) log.info(`ringbook da ${this.o.node_id}: settlement poster: working again (after: ${failing})`);
      this.status.last_error = null;
      this.status.last_error_at_ms = null;
    } catch (e) {
      const message = (e as Error).message;
      endpoint_failed = isEndpointFailure(e);
      if (message !== failing) log.error(`ringbook da ${this.o.node_id}: settlement poster: ${message}`);
      this.status.last_error = message;
      this.status.last_error_at_ms = Date.now();
    } finally {
      const p = this.poster;
      this.status.roots_posted_batch_id = p.posted_batch_id;
      this.status.forced_processed = p.forced_processed;
      this.status.batch_requests = p.batch_requests;
      this.status.forced_remembered = this.forced.size;
      this.noteStop();
    }
    // After the round's transaction (if any) was answered: none of this role's is in flight when
    // it hands the lease over, which another role may take at once.
    await this.hand_over?.afterRound({ unanswered_since_ms: Math.max(started_ms, this.answered_ms), endpoint_failed });
  }

  /**
   * Where posting stops (status), and the stop logged once: a mismatch stops the poster for good
   * (checked_roots.ts), and each round would otherwise only show roots_posted_batch_id not moving.
   */
  private noteStop(): void {
    const s = this.status;
    s.postable_batch_id = this.o.roots.latest();
    const differs = this.poster.chain_differs_batch_id;
    if (differs >= 0 && s.chain_differs_batch_id === null) {
      s.chain_differs_batch_id = differs;
      log.error(`ringbook da ${this.o.node_id}: settlement poster: stopped: the contract's roots of its last batch ${differs} ` +
        `differ from this role's; nothing is posted on top of another history; the operator decides`, undefined, { batch_id: differs });
    }
    const mismatch = this.o.roots.first_mismatch ?? -1;
    if (mismatch < 0 || s.stopped_at_mismatch_batch_id !== null) return;
    s.stopped_at_mismatch_batch_id = mismatch;
    log.error(`ringbook da ${this.o.node_id}: settlement poster: stopped at batch ${mismatch}: its roots differ from the leader's ` +
      `header; nothing from it on is posted (roots posted through batch ${s.roots_posted_batch_id}, postable through ` +
      `${s.postable_batch_id}); the operator decides (docs/settlement.md, "Roots in a cluster")`, undefined, { batch_id: mismatch });
  }

  /**
   * One share from a gateway (read as hostile input: any peer on the bus can send one). The later
   * batch wins for an entry reported twice, so a batch id is taken only up to the batch after the
   * last one this role may post (a gateway refusing an entry before the engine names the batch to
   * come): a far-future id, kept, would hold its entry uncounted for ever (24 h later anyone could
   * challenge and freeze the contract), and no honest share could lower it. An entry of a batch
   * this role has not reached is shared again by its gateway each round, so it is taken later.
   */
  heard(data: Uint8Array): void {
    const s = this.status;
    s.shares_received++;
    let m: ForcedShareMessage | null;
    try {
      m = readForcedShare(data);
    } catch (e) {
      if (s.shares_refused++ === 0) log.warn(`ringbook da ${this.o.node_id}: a malformed forced share ignored (${String(e)})`);
      return;
    }
    if (m === null) {
      if (s.shares_refused++ === 0) log.warn(`ringbook da ${this.o.node_id}: a forced share of another version ignored (a newer gateway?)`);
      return;
    }
    // A standby takes no entry (nor counts any ignored): the gateways share each round until the
    // contract counts, so a role that takes the lease hears them again after its first round.
    if (!this.holding()) return;
    const counted = this.poster.forced_processed;
    const batch_max = this.o.roots.latest() + 1;
    let ignored = 0;
    m.batches.forEach((b, i) => {
      const id = m.from + i;
      // Counted on chain already (a share sent before the last post): nothing to do, not odd.
      if (counted >= 0 && id < counted) return;
      if (counted < 0 || id >= counted + FORCED_WINDOW_ENTRIES || b > batch_max) {
        ignored++;
        return;
      }
      const known = this.forced.batchOf(id);
      if (known === null || b > known) this.forced.handled(id, b);
    });
    if (ignored > 0 && s.share_entries_ignored === 0) {
      log.warn(`ringbook da ${this.o.node_id}: ${ignored} forced share entries from ${m.gateway} not taken ` +
        `(queue ids from ${m.from}, the count ${counted}, batches up to ${batch_max}; shared again until counted)`);
    }
    s.share_entries_ignored += ignored;
    s.forced_remembered = this.forced.size;
  }

  /** A batch after the last one this role has (batch_request.ts; the leader ignores it once answered). */
  private requestBatch(): void {
    const failed = sendBatchRequest(this.o.nc, { gateway: this.o.node_id, after_batch_id: this.o.roots.latest() });
    if (failed !== null) log.warn(`ringbook da ${this.o.node_id}: batch request not sent (${String(failed)})`);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    await this.running;
    this.sub?.unsubscribe();
    this.sub = null;
  }
}
