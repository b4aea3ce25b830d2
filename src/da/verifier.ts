// The verifier: re-executes published batches from genesis with the real engine and compares
// what it gets with what the operator published (docs/verifiability.md, "Verifier and fraud
// proofs"). Checks per batch, in order:
//   1. the header's batch id is the next one, and its prev_state_root is the root the verifier
//      holds (for batch 1: the genesis root of the verifier's config; a difference there means
//      the configs differ and is an error, not fraud);
//   2. the inputs are whole request records and hash to the header's input_hash;
//   3. re-executing the inputs gives the header's state_root and fills_root;
//   4. the published fills are exactly the re-executed fills, and hash to the header's fills_root;
//   5. consent (when `consent_assets` is given): every user request carries a signature over a
//      message that says exactly it, recovering to its user (checked across cores, a page of
//      batches at a time, by `checkConsent`); operator requests only cancel (consent_check.ts).
// Any failure of 2-5 (or of 1 beyond batch 1) is fraud: a fraud proof names the batch, the
// expected (re-executed) and found (published) roots, the inputs, and the first differing leaf.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { EngineConfig } from '../engine/api.js';
import { FillsTree, fillLeafValues, type FillLeaf } from './fills_tree.js';
import { toHex0x } from '../util/hex.js';
import { AnswerTooLargeError, isTimeout, readAnswer } from '../util/bounded_answer.js';
import { keccak256 } from './keccak.js';
import type { PublishedBatch } from './published.js';
import { consentOf, type BatchConsent, type ConsentLookup } from './consent_check.js';
import type { ConsentPool } from './consent_pool.js';
import { recordsOfBytes, ReplayExecutor, type ReplayOptions } from './replay.js';
import { firstDifferingChange, type BatchRoots, type StateRootBuilder } from './state_root.js';

export interface FraudProof {
  type: 'ringbook-fraud-proof';
  version: 1;
  batch_id: number;
  detected_at: string;
  source: string;
  reasons: string[];
  /** What re-executing the published inputs from the agreed previous state gives. */
  expected: { prev_state_root: string; state_root: string | null; fills_root: string | null; input_hash: string };
  /** The published header. */
  found: PublishedBatch['header'];
  inputs_hex: string;
  input_count: number | null;
  /**
   * The first state leaf (canonical order) on which re-execution and the operator's published
   * state diff disagree: expected = re-executed value, found = operator's (null = not changed /
   * removed). Null when the diffs agree or none was published.
   */
  first_differing_leaf: { id: string; expected: unknown; found: unknown } | null;
  /** Whether the operator's published state diff, applied to the agreed previous state, gives its claimed root. */
  published_diff_gives_claimed_root: boolean | null;
  first_differing_fill: { index: number; expected: string[] | null; found: string[] | null } | null;
  /** Signatures that do not recover to the request's user (consent fraud); absent otherwise. */
  consent_failures?: { request: string; expected_signer: string; recovered_signer: string | null }[];
  /** The re-executed fills (the published ones are in the DA batch). */
  expected_fills: string[][] | null;
}

export interface BatchVerdict {
  batch_id: number;
  ok: boolean;
  /** Not fraud but a reason to stop (config mismatch at genesis). */
  error?: string;
  fraud?: FraudProof;
}

export interface VerifierOptions {
  /** Where fraud proofs go (a directory; created on demand). Null: not written. */
  out_dir?: string | null;
  /** A label for proofs (the DA base URL). */
  source?: string;
  log?: (message: string) => void;
  /** Start from this snapshot (its batch, engine state, zero balance leaves) instead of genesis. */
  snapshot?: NonNullable<ReplayOptions['restore']>;
  /** The config's assets (symbols, on-chain decimals): turns the consent checks on. */
  consent_assets?: ConsentLookup['assets'];
}

function sameFill(a: FillLeaf, b: FillLeaf): boolean {
  const x = fillLeafValues(a);
  const y = fillLeafValues(b);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

function safeValues(f: FillLeaf | undefined): string[] | null {
  if (f === undefined) return null;
  try {
    return fillLeafValues(f);
  } catch {
    return [JSON.stringify(f)];
  }
}

export class Verifier {
  private readonly exec: ReplayExecutor;
  private readonly options: VerifierOptions;
  readonly genesis_root: string;
  /** The root after the last batch re-executed. */
  state_root: string;
  /** Last batch id re-executed. */
  batch_id = 0;
  proofs_written: string[] = [];
  /** Batches verified whose consent is still to be checked (checkConsent). */
  private pending_consent: { b: PublishedBatch; consent: BatchConsent; count: number | null }[] = [];
  private readonly lookup: ConsentLookup | null;

  constructor(engine_config: EngineConfig, options: VerifierOptions = {}) {
    this.exec = new ReplayExecutor(engine_config, { restore: options.snapshot });
    this.options = options;
    const engine = this.exec.engine;
    this.lookup = options.consent_assets === undefined ? null : {
      assets: options.consent_assets,
      marketId: (m: number) => {
        if (!(m >= 0 && m < engine.marketCount())) return null;
        const info = engine.marketInfo(m);
        return `${engine_config.assets[info.base_asset]}-${engine_config.assets[info.quote_asset]}`;
      },
    };
    if (options.snapshot === undefined) {
      this.genesis_root = this.exec.genesis().state_root;
      this.state_root = this.genesis_root;
    } else {
      // The snapshot's root, from its own state: the next batch's prev_state_root must be it.
      this.genesis_root = '';
      this.state_root = this.exec.builder.stateRoot();
      this.batch_id = options.snapshot.batch_id;
    }
  }

  /** The re-executed state's leaves (escape-hatch proofs are built from them). */
  get builder(): StateRootBuilder {
    return this.exec.builder;
  }

  /**
   * Checks and re-executes the next batch. `check: false` re-executes without comparing (the
   * batches before `--from`; the first checked batch's prev_state_root still has to match).
   * After a fraud verdict the verifier's state follows the published inputs, if they could be
   * executed; callers stop there.
   */
  verify(b: PublishedBatch, check = true): BatchVerdict {
    const h = b.header;
    const id = this.batch_id + 1;
    if (h.batch_id !== id) throw new Error(`expected batch ${id}, the DA layer served batch ${h.batch_id}`);
    const prev = this.state_root;
    const reasons: string[] = [];
    if (check && h.prev_state_root !== prev) {
      if (id === 1) {
        return {
          batch_id: id, ok: false,
          error: `batch 1's prev_state_root ${h.prev_state_root} is not the genesis root ${prev} of this verifier's config: ` +
            'the markets or fees configured differ from the operator\'s (use the server\'s config: --config or RINGBOOK_CONFIG)',
        };
      }
      reasons.push(`prev_state_root ${h.prev_state_root} is not the state root ${prev} after batch ${id - 1}`);
    }
    const bytes = Buffer.from(b.inputs_hex, 'hex');
    const input_hash = toHex0x(keccak256(bytes));
    if (check && input_hash !== h.input_hash) reasons.push(`inputs hash to ${input_hash}, the header says ${h.input_hash}`);
    let roots: BatchRoots | null = null;
    let count: number | null = null;
    try {
      const r = recordsOfBytes(bytes);
      count = r.count;
      roots = this.exec.apply(id, h.timestamp, r.records, r.count);
    } catch (e) {
      reasons.push(`inputs could not be re-executed: ${(e as Error).message}`);
    }
    this.batch_id = id;
    if (roots !== null) this.state_root = roots.state_root;
    if (!check) return { batch_id: id, ok: true };
    // After execution: markets this batch added are known. Recovery waits for checkConsent.
    if (this.lookup !== null) this.pending_consent.push({ b, consent: consentOf(bytes, this.lookup), count });
    let first_fill: FraudProof['first_differing_fill'] = null;
    let first_leaf: FraudProof['first_differing_leaf'] = null;
    let diff_gives_claimed: boolean | null = null;
    if (roots !== null) {
      if (roots.state_root !== h.state_root) reasons.push(`re-execution gives state_root ${roots.state_root}, the header says ${h.state_root}`);
      if (roots.fills_root !== h.fills_root) reasons.push(`re-execution gives fills_root ${roots.fills_root}, the header says ${h.fills_root}`);
      const n = Math.max(roots.fills.length, b.fills.length);
      for (let i = 0; i < n; i++) {
        const ours = roots.fills[i];
        const theirs = b.fills[i];
        if (ours === undefined || theirs === undefined || !sameFill(ours, theirs)) {
          first_fill = { index: i, expected: safeValues(ours), found: safeValues(theirs) };
          reasons.push(`published fills differ from re-executed fills (first at index ${i}; ${b.fills.length} published, ${roots.fills.length} re-executed)`);
          break;
        }
      }
      if (b.state_diff !== undefined) {
        const d = firstDifferingChange(roots.state_diff, b.state_diff);
        if (d !== null) {
          first_leaf = d;
          reasons.push(`the published state diff differs from re-execution (first at leaf ${d.id})`);
        }
        if (d !== null || roots.state_root !== h.state_root) {
          try {
            diff_gives_claimed = this.exec.builder.rootIfLastBatchMade(b.state_diff) === h.state_root;
          } catch {
            diff_gives_claimed = false;
          }
        }
      }
    }
    let published_fills_root: string | null = null;
    try {
      published_fills_root = FillsTree.build(b.fills).root();
    } catch (e) {
      reasons.push(`published fills cannot be hashed: ${(e as Error).message}`);
    }
    if (published_fills_root !== null && published_fills_root !== h.fills_root) {
      reasons.push(`published fills hash to ${published_fills_root}, the header says ${h.fills_root}`);
    }
    if (reasons.length === 0) return { batch_id: id, ok: true };
    const fraud: FraudProof = {
      type: 'ringbook-fraud-proof',
      version: 1,
      batch_id: id,
      detected_at: new Date().toISOString(),
      source: this.options.source ?? '',
      reasons,
      expected: { prev_state_root: prev, state_root: roots?.state_root ?? null, fills_root: roots?.fills_root ?? null, input_hash },
      found: h,
      inputs_hex: b.inputs_hex,
      input_count: count,
      first_differing_leaf: first_leaf,
      published_diff_gives_claimed_root: diff_gives_claimed,
      first_differing_fill: first_fill,
      expected_fills: roots === null ? null : roots.fills.map((f) => fillLeafValues(f)),
    };
    this.writeProof(fraud);
    return { batch_id: id, ok: false, fraud };
  }

  /**
   * Checks the consent of every batch verified since the last call: recovers all their
   * signatures at once across the pool's cores, then writes one fraud proof per batch with a
   * consent problem. Returns those verdicts (empty: all consent holds).
   */
  async checkConsent(pool: ConsentPool): Promise<BatchVerdict[]> {
    const pending = this.pending_consent;
    this.pending_consent = [];
    const jobs = pending.flatMap((p) => p.consent.jobs);
    const failures = await pool.failures(jobs);
    const verdicts: BatchVerdict[] = [];
    for (const p of pending) {
      const mine = failures.filter((f) => p.consent.jobs.includes(f.job));
      if (mine.length === 0 && p.consent.problems.length === 0) continue;
      const h = p.b.header;
      const fraud: FraudProof = {
        type: 'ringbook-fraud-proof', version: 1, batch_id: h.batch_id, detected_at: new Date().toISOString(),
        source: this.options.source ?? '',
        reasons: [
          ...p.consent.problems,
          ...mine.map((f) => `${f.job.label}: the signature recovers to ${f.recovered ?? 'nothing (invalid signature)'}, not to the user`),
        ],
        expected: { prev_state_root: h.prev_state_root, state_root: null, fills_root: null, input_hash: h.input_hash },
        found: h, inputs_hex: p.b.inputs_hex, input_count: p.count, first_differing_leaf: null,
        published_diff_gives_claimed_root: null, first_differing_fill: null, expected_fills: null,
        consent_failures: mine.map((f) => ({ request: f.job.label, expected_signer: f.job.expected, recovered_signer: f.recovered })),
      };
      this.writeProof(fraud);
      verdicts.push({ batch_id: h.batch_id, ok: false, fraud });
    }
    return verdicts;
  }

  private writeProof(p: FraudProof): void {
    const log = this.options.log ?? ((m: string) => console.error(m));
    log(`ringbook-verify: FRAUD in batch ${p.batch_id}: ${p.reasons.join('; ')}`);
    if (p.first_differing_leaf) log(`ringbook-verify: first differing leaf: ${JSON.stringify(p.first_differing_leaf)}`);
    if (p.first_differing_fill) log(`ringbook-verify: first differing fill: ${JSON.stringify(p.first_differing_fill)}`);
    const dir = this.options.out_dir;
    if (dir === null || dir === undefined) return;
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `fraud-batch-${p.batch_id}${p.consent_failures !== undefined ? '-consent' : ''}.json`);
    writeFileSync(file, JSON.stringify(p, null, 2) + '\n');
    this.proofs_written.push(file);
    log(`ringbook-verify: fraud proof written to ${file}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Fetching from a DA endpoint

/**
 * Longest answer of a DA server read (`GET /da/batches?from=&limit=`, `/da/batches/:id`): 256 MiB.
 * An honest page's inputs are bounded by the page rule of src/gateway/routes_da.ts: batches are
 * added until 8 MiB of inputs hex (DA_PAGE_INPUT_CHARS_MAX), plus the last batch's, at most
 * (limits.batch_requests_max 4096 + CONSENT_SLOTS_MAX 7 + REQUEST_GROUP_MAX 64 x (1 + 7)) records
 * (src/matcher/matcher.ts's batch buffer) x RECORD_BYTES 208 x 2 hex = 1.9 MB: ~10.3 MB of inputs.
 * Its fills and state diff are bounded only by the book (a taker sweeping N resting orders makes
 * N fills; ~330 bytes of JSON each, ~700 with the leaves they change): 256 MiB is ~25 times the
 * inputs' bound, room for ~380,000 fills a page, and half the longest string V8 makes (2^29 - 24
 * chars), past which no verifier could parse the page at all.
 */
export const DA_ANSWER_BYTES_MAX = 256 * 1024 * 1024;
/** Longest body read from a 429 or 5xx answer (only drained before a retry: a few KB at most). */
const DA_ERROR_BODY_BYTES_MAX = 64 * 1024;
/**
 * How long one DA fetch may take, its whole body included: 60 s lets a DA_ANSWER_BYTES_MAX answer
 * come at ~4.5 MB/s (an honest page of ~10 MB takes well under a second on a LAN). A server that
 * never answers, or trickles, costs at most (DA_FETCH_RETRIES + 1) x this, not forever.
 */
export const DA_FETCH_TIMEOUT_MS = 60_000;
/** Attempts after the first on no connection, no whole answer in time, HTTP 429 or 5xx. */
export const DA_FETCH_RETRIES = 5;

/** Bounds of one getData; tests pass small ones (defaults: the DA_FETCH_ constants above). */
export interface DaFetchOptions {
  retries?: number;
  timeout_ms?: number;
  bytes_max?: number;
}

/**
 * GET base/path answering the `{ok, data}` envelope; retries 429 (Retry-After), 5xx, no connection
 * and no whole answer within `timeout_ms`. An answer past `bytes_max` throws AnswerTooLargeError at
 * once (asking again would read the same). Before (2026-11-29, h32b), the fetch had no timeout and
 * res.text() read whatever came: a hostile server could hang `ringbook verify` or fill its memory.
 */
export async function getData(base: string, p: string, opts: DaFetchOptions = {}): Promise<unknown> {
  const url = base.replace(/\/$/, '') + p;
  const retries = opts.retries ?? DA_FETCH_RETRIES;
  const timeout_ms = opts.timeout_ms ?? DA_FETCH_TIMEOUT_MS;
  let last: unknown = null;
  for (let attempt = 0; attempt <= retries; attempt++) {
    let status: number;
    let text: string;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(timeout_ms) });
      status = res.status;
      if (status === 429 || status >= 500) {
        const after = Number(res.headers.get('retry-after') ?? '1');
        last = new Error(`HTTP ${status}`);
        await readAnswer(res, DA_ERROR_BODY_BYTES_MAX).catch(() => undefined);
        await sleep(Math.min(60, Number.isFinite(after) && after > 0 ? after : 1) * 1000);
        continue;
      }
      text = await readAnswer(res, opts.bytes_max ?? DA_ANSWER_BYTES_MAX);
    } catch (e) {
      if (e instanceof AnswerTooLargeError) throw e;
      last = isTimeout(e) ? new Error(`no whole answer within ${timeout_ms} ms`) : e;
      if (attempt < retries) await sleep(200 * (attempt + 1));
      continue;
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`GET ${url}: HTTP ${status}, not JSON: ${text.slice(0, 200)}`);
    }
    const env = body as { ok?: boolean; data?: unknown; error?: unknown; message?: unknown };
    if (status !== 200 || env.ok !== true) throw new Error(`GET ${url}: HTTP ${status} ${String(env.error)} ${String(env.message ?? '')}`);
    return env.data;
  }
  throw new Error(`GET ${url}: gave up after ${retries + 1} attempts: ${last instanceof Error ? last.message : String(last)}`);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
