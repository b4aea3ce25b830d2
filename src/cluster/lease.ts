// A lease: a JetStream KV key with a time to live, held by one process at a time. Three uses: the
// matcher's leadership (matcher_role.ts, bucket rb_matcher_lease), the cluster gateway that reads
// the settlement contract's events (ChainReaderLease below, bucket rb_chain_reader_lease) and the
// DA role that posts roots (SettlementPosterLease, bucket rb_settlement_poster_lease). The
// bucket's max age (a stream max_age, in nats-server since 2.2; per-message TTLs need 2.11 and are
// not used) removes the key when its holder stops renewing; create() succeeds only while the key
// is absent, update() only at the revision the holder last wrote (compare-and-set).
//
// The holder's rule (docs/scale-out.md, "The lease and the fence"): the lease is *valid* until
// the send time of its last confirmed create/renewal plus the TTL minus a safety margin
// (leaseSafetyMarginMs), by both the monotonic and the wall clock. The key was stored no earlier
// than that send, so no other process can create it before send + TTL: the holder stops acting
// at least the margin before anyone else can start. A renewal NATS did not answer does not extend
// it (before 2026-11-29 it "changed nothing" and a leader cut off from NATS kept leading and
// reporting `leader` while a standby took the expired key). The event stream's
// expected-last-sequence fence (matcher_store.ts) still keeps the log linear for a publish sent
// before the deadline that reaches the stream only after the margin.
import { performance } from 'node:perf_hooks';
import { Kvm, type KV } from '@nats-io/kv';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { CHAIN_READER_BUCKET, LEASE_KEY, SETTLEMENT_POSTER_BUCKET } from './log_format.js';
import { componentLog } from '../util/log.js';

const log = componentLog('cluster');

/** Whether a JetStream error is the compare-and-set refusal (someone else wrote since). */
export function isWrongLastSequence(e: unknown): boolean {
  return e instanceof JetStreamApiError &&
    (e.code === JetStreamApiCodes.StreamWrongLastSequence || e.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown);
}

export type RenewResult = 'held' | 'lost' | 'unknown';

/**
 * How long before its key can expire on the NATS nodes a holder stops acting: a quarter of the
 * TTL (250 ms at the default 1 s). It covers what happens between the holder's clock check and
 * its write reaching the stream (an event-loop turn, the loopback or LAN flight) and the clocks'
 * rate difference between hosts (ppm). With renewals every TTL/4, a holder thus rides out two
 * renewals in a row that fail at once and stops at the third. One renewal that hangs for its whole
 * timeout (renewTimeoutMs, TTL/2) already outlasts the validity (the TTL less this margin, from the
 * last confirmed send: sent 250 ms after it, given up 500 ms later at 750 ms): the holder stops
 * acting, and counts a takeover when a later renewal confirms the key it still holds (measured,
 * h32y: NATS paused 0.7 s under a holder).
 */
export function leaseSafetyMarginMs(ttl_ms: number): number {
  return Math.floor(ttl_ms / 4);
}

/** A renewal not answered within half the TTL is 'unknown': the next one is sent at the next tick. */
function renewTimeoutMs(ttl_ms: number): number {
  return Math.max(50, Math.floor(ttl_ms / 2));
}

/** Both clocks at one moment: monotonic (never jumps) and wall (what the NATS nodes' max_age counts in). */
interface Clocks {
  mono_ms: number;
  wall_ms: number;
}

function clocksNow(): Clocks {
  return { mono_ms: performance.now(), wall_ms: Date.now() };
}

export class KvLease {
  private readonly kv: KV;
  private readonly holder: string;
  private readonly ttl_ms: number;
  private revision = 0;
  /** The key holds this holder's name at `revision` (as last confirmed; it may have expired since). */
  held = false;
  /** Valid until (both clocks): the last confirmed write's send time + TTL - margin. */
  private valid_until: Clocks = { mono_ms: 0, wall_ms: 0 };

  private constructor(kv: KV, holder: string, ttl_ms: number) {
    this.kv = kv;
    this.holder = holder;
    this.ttl_ms = ttl_ms;
  }

  /** Held, and its last confirmed write recent enough that nobody else can take the key yet. */
  validNow(): boolean {
    // Both reads inline (no Clocks object): this runs before every batch, status and /status answer.
    return this.held && performance.now() < this.valid_until.mono_ms && Date.now() < this.valid_until.wall_ms;
  }

  /** Milliseconds of validity left (<= 0: lapsed or not held); for logs. */
  validForMs(): number {
    if (!this.held) return 0;
    return Math.min(this.valid_until.mono_ms - performance.now(), this.valid_until.wall_ms - Date.now());
  }

  /**
   * Stops treating the lease as held (its validity lapsed): the key stays until its TTL ends it
   * (not deleted: a write sent just before the deadline gets the margin to land first), and
   * tryAcquire() takes it again only once it is gone.
   */
  drop(): void {
    this.held = false;
  }

  private confirmed(sent: Clocks): void {
    const keep_ms = this.ttl_ms - leaseSafetyMarginMs(this.ttl_ms);
    this.valid_until = { mono_ms: sent.mono_ms + keep_ms, wall_ms: sent.wall_ms + keep_ms };
  }

  /** Opens (or creates) the lease bucket `bucket`: history 1, TTL `ttl_ms`, `replicas` copies. */
  static async open(nc: NatsConnection, bucket: string, holder: string, ttl_ms: number, replicas: number): Promise<KvLease> {
    const kv = await new Kvm(nc).create(bucket, { ttl: ttl_ms, replicas, history: 1 });
    return new KvLease(kv, holder, ttl_ms);
  }

  /** Takes the lease if nobody holds it; false when someone does (or NATS did not answer). */
  async tryAcquire(): Promise<boolean> {
    const sent = clocksNow();
    try {
      this.revision = await this.kv.create(LEASE_KEY, this.holder);
      this.confirmed(sent);
      this.held = true;
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Renews a held lease: 'lost' when someone else took it or it expired, 'unknown' when NATS did
   * not answer (within half the TTL; the validity is then not extended). 'held' extends the
   * validity from this call's start, which may already be past (a late answer).
   */
  async renew(): Promise<RenewResult> {
    const sent = clocksNow();
    try {
      this.revision = await this.kv.update(LEASE_KEY, this.holder, this.revision, renewTimeoutMs(this.ttl_ms));
      this.confirmed(sent);
      return 'held';
    } catch (e) {
      if (isWrongLastSequence(e)) {
        this.held = false;
        return 'lost';
      }
      return 'unknown';
    }
  }

  /** Who holds the lease now (null: nobody). */
  async holderNow(): Promise<string | null> {
    const e = await this.kv.get(LEASE_KEY);
    if (e === null || e.operation !== 'PUT') return null;
    return e.string();
  }

  /** A clean stop hands the lease over at once instead of after its TTL. */
  async release(): Promise<void> {
    if (!this.held) return;
    this.held = false;
    await this.kv.delete(LEASE_KEY, { previousSeq: this.revision }).catch(() => undefined);
  }
}

/** What a TimedLease logs, each once when it happens. */
export interface LeaseLines {
  /** This process starts acting (took the lease, or a late renewal made it valid again). */
  taken: string;
  /** It stops acting (another took the key, or its validity lapsed by its own clock). */
  lost: string;
  /** Logged at start when another process holds the lease (absent: nothing logged). */
  standby?: string;
  /** withdraw() while holding (followed by `: ` and the reason). */
  handed_over: string;
  /** withdraw() while not holding: it stops asking for the lease (followed by `: ` and the reason). */
  not_taken: string;
  /** rejoin(): it asks for the lease again (followed by `: ` and the reason). */
  rejoined: string;
}

/**
 * A lease renewed by its own timer every `ttl_ms / 4`, not by the rounds of the work it gates, so a
 * slow round (many blocks of logs, a slow endpoint) does not let the key expire under a live holder.
 * Acting follows the lease's validity (KvLease.validNow), as the matcher's leading does: a holder
 * whose renewals go unanswered stops before another can take the key, and goes on if a later
 * renewal is confirmed. Each change of holding() is logged once, at the tick that sees it.
 */
export class TimedLease {
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;
  private was_holding = false;
  /**
   * Stepped out (withdraw): neither renews nor takes the lease until rejoin(). Its holder can no
   * longer do the work (a settlement poster stopped at a root mismatch, stuck behind the
   * stream, or whose RPC endpoint fails), and a renewing holder that does nothing keeps every other candidate out.
   */
  private withdrawn = false;
  /** Times holding() turned true at a tick: the first take, each takeover after, a validity a late renewal restored. */
  takeovers = 0;

  protected constructor(private readonly lease: KvLease, private readonly lines: LeaseLines) {}

  /** Takes the lease if free (one tick), then ticks every TTL/4. */
  protected static async begin<T extends TimedLease>(r: T, ttl_ms: number): Promise<T> {
    await r.tick();
    if (!r.was_holding && r.lines.standby !== undefined) log.info(r.lines.standby);
    r.timer = setInterval(() => void r.tick(), Math.max(10, Math.floor(ttl_ms / 4)));
    return r;
  }

  /** Whether this process acts now (holds the lease and its validity has not lapsed). */
  holding(): boolean {
    return this.lease.validNow();
  }

  private async tick(): Promise<void> {
    if (this.ticking || this.withdrawn) return;
    this.ticking = true;
    try {
      if (this.lease.held) await this.lease.renew();
      else await this.lease.tryAcquire();
      const now = this.lease.validNow();
      if (now !== this.was_holding) {
        if (now) {
          this.takeovers++;
          log.info(this.lines.taken);
        } else {
          log.warn(this.lines.lost);
        }
      }
      this.was_holding = now;
    } finally {
      this.ticking = false;
    }
  }

  /** Whether withdraw() stepped this process out (and rejoin() has not brought it back). */
  isWithdrawn(): boolean {
    return this.withdrawn;
  }

  /**
   * Steps out: stops renewing and taking the lease, and hands it over at once if held (the key is
   * deleted at this holder's revision, so another candidate's next tick takes it). The caller must
   * have finished the work the lease gated (no write in flight): unlike a lapse, nothing here
   * waits out the TTL. Waits for a tick in progress, so none renews after it. `why` is logged.
   */
  async withdraw(why: string): Promise<void> {
    if (this.withdrawn) return;
    this.withdrawn = true;
    while (this.ticking) await new Promise((r) => setTimeout(r, 5));
    const held = this.lease.held;
    await this.lease.release();
    this.was_holding = false;
    log.warn(`${held ? this.lines.handed_over : this.lines.not_taken}: ${why}`);
  }

  /** Takes part again after withdraw(): the next tick takes the lease if it is free. `why` is logged. */
  rejoin(why: string): void {
    if (!this.withdrawn) return;
    this.withdrawn = false;
    log.info(`${this.lines.rejoined}: ${why}`);
  }

  /** A clean stop hands the lease over at once. */
  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    while (this.ticking) await new Promise((r) => setTimeout(r, 5));
    await this.lease.release();
  }
}

/**
 * The cluster's chain reader (docs/settlement.md, "Roots in a cluster"): of the gateways with
 * `settlement.rpc_url`, only the holder of this lease reads the contract's events (deposits,
 * forced entries); the others keep serving and still read `lastBatchId`.
 */
export class ChainReaderLease extends TimedLease {
  static async start(nc: NatsConnection, holder: string, ttl_ms: number, replicas: number): Promise<ChainReaderLease> {
    return TimedLease.begin(new ChainReaderLease(await KvLease.open(nc, CHAIN_READER_BUCKET, holder, ttl_ms, replicas), {
      taken: `ringbook gateway ${holder}: chain reader lease taken: reading the chain`,
      lost: `ringbook gateway ${holder}: chain reader lease lost: no longer reading the chain`,
      handed_over: `ringbook gateway ${holder}: chain reader lease handed over`,
      not_taken: `ringbook gateway ${holder}: chain reader lease not taken`,
      rejoined: `ringbook gateway ${holder}: chain reader lease: taking part again`,
    }), ttl_ms);
  }
}

/**
 * The cluster's settlement root poster (docs/scale-out.md, "Settlement roots"): of the DA roles
 * with RINGBOOK_SETTLEMENT_POSTER=1, only the holder of this lease posts roots
 * (settlement_poster.ts); the others keep their stores and compare roots, and one of them takes
 * the lease about a TTL after the holder's death and posts from the contract's lastBatchId on.
 */
export class SettlementPosterLease extends TimedLease {
  static async start(nc: NatsConnection, holder: string, ttl_ms: number, replicas: number): Promise<SettlementPosterLease> {
    return TimedLease.begin(new SettlementPosterLease(await KvLease.open(nc, SETTLEMENT_POSTER_BUCKET, holder, ttl_ms, replicas), {
      taken: `ringbook da ${holder}: settlement poster lease taken: posting roots from the contract's lastBatchId`,
      lost: `ringbook da ${holder}: settlement poster lease lost or lapsed: standby, posting nothing`,
      standby: `ringbook da ${holder}: settlement poster lease held by another DA role: standby, posting nothing`,
      handed_over: `ringbook da ${holder}: settlement poster lease handed over, posting nothing`,
      not_taken: `ringbook da ${holder}: settlement poster lease no longer taken by this role, posting nothing`,
      rejoined: `ringbook da ${holder}: settlement poster lease: this role may take it again`,
    }), ttl_ms);
  }
}
