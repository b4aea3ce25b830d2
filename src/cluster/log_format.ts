// The two replicated logs of a Ringbook cluster (docs/scale-out.md), on NATS JetStream:
//   - the request stream: one message per gateway event-loop turn, holding whole request units
//     (a request, its consent slots, and for POST /orders/batch the whole group) as the fixed-layout
//     records (src/ring/records.ts, request_records.ts) written to the gateway's request ring; message id
//     `<gateway>.<seq of its first request>` so a retried publish is stored once (JetStream's
//     de-duplication window);
//   - the event stream: one message per batch, written by the leader matcher only: the batch's
//     input records followed by its event records (BATCH_BEGIN .. BATCH_COMMITTED), and headers
//     with the batch number, time, the request stream position it consumed through and its
//     roots. A standby re-executes the inputs and compares; a gateway writes the events into its
//     event ring; a new leader resumes after the last batch's request position.
import { headers, type MsgHdrs } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { RECORD_WORDS } from '../ring/records.js';

export const REQUEST_STREAM = 'RB_REQUESTS';
export const REQUEST_SUBJECT = 'rb.requests';
export const EVENT_STREAM = 'RB_EVENTS';
export const EVENT_SUBJECT = 'rb.events';
/**
 * The event stream republishes each stored message's headers here, without its body: the readers
 * without a consumer (log_reader_seq.ts) wake on it, then fetch the message by sequence.
 */
export const EVENT_TIP_SUBJECT = 'rb.tip.events';
export const LEASE_BUCKET = 'rb_matcher_lease';
export const LEASE_KEY = 'leader';
/** The lease of the one gateway that reads the settlement contract's events (lease.ts ChainReaderLease). */
export const CHAIN_READER_BUCKET = 'rb_chain_reader_lease';
/** The lease of the one DA role that posts settlement roots (lease.ts SettlementPosterLease). */
export const SETTLEMENT_POSTER_BUCKET = 'rb_settlement_poster_lease';

export const RECORD_BYTES = RECORD_WORDS * 4;
/**
 * Largest message the streams accept. A batch message carries its inputs and events (208 bytes
 * each); the leader cuts batches at `batch_records_max` inputs (1,024: 213 KB) and the events of
 * one request are bounded by the engine's limits, but a pause that cancels a whole book can emit
 * many: 32 MiB keeps ~160 k events per batch. nats-server's max_payload must allow it.
 */
export const LOG_MESSAGE_BYTES_MAX = 32 * 1024 * 1024;
/**
 * A consumer's pull requests expire after this (its idle heartbeat is half of it): two missed
 * heartbeats make the client recreate an ordered consumer whose NATS node died (the default 30 s
 * would stall a gateway's answers for a minute after one node's loss).
 */
export const CONSUMER_EXPIRES_MS = 2_000;
/** JetStream's de-duplication window for request message ids: a retry within it is stored once. */
export const DUPLICATE_WINDOW_MS = 120_000;
/**
 * A gateway retries a request publish this long (a NATS node restart, an election): every retry
 * falls within DUPLICATE_WINDOW_MS, and a request stream with a shorter window than this does not
 * de-duplicate them all (request_purge.ts requestWindowWarning).
 */
export const REQUEST_PUBLISH_GIVE_UP_MS = 30_000;

const H_BATCH = 'Rb-Batch';
const H_TIME = 'Rb-Time-Ms';
const H_REQUESTS_THROUGH = 'Rb-Requests-Through';
const H_INPUTS = 'Rb-Input-Records';
const H_STATE_ROOT = 'Rb-State-Root';
const H_FILLS_ROOT = 'Rb-Fills-Root';
const H_LEADER = 'Rb-Leader';

/** The header of one batch message. */
export interface BatchHeader {
  batch_id: number;
  time_ms: number;
  /** The last request stream sequence this batch consumed (0: none yet). */
  requests_through: number;
  /** Input records in the body, before the event records. */
  input_records: number;
  state_root: string;
  fills_root: string;
  /** The matcher that cut the batch (for the operator; not compared). */
  leader: string;
}

export function batchHeaders(h: BatchHeader): MsgHdrs {
  const hd = headers();
  hd.set(H_BATCH, String(h.batch_id));
  hd.set(H_TIME, String(h.time_ms));
  hd.set(H_REQUESTS_THROUGH, String(h.requests_through));
  hd.set(H_INPUTS, String(h.input_records));
  hd.set(H_STATE_ROOT, h.state_root);
  hd.set(H_FILLS_ROOT, h.fills_root);
  hd.set(H_LEADER, h.leader);
  return hd;
}

function intHeader(hd: MsgHdrs, name: string): number {
  const v = hd.get(name);
  if (!/^[0-9]+$/.test(v)) throw new Error(`event stream: header ${name} is ${JSON.stringify(v)}, not an integer`);
  return Number(v);
}

/** Reads a batch message's header; throws on a message this program did not write. */
export function readBatchHeader(hd: MsgHdrs | undefined, body_bytes: number): BatchHeader {
  if (hd === undefined) throw new Error('event stream: a message without headers');
  const h: BatchHeader = {
    batch_id: intHeader(hd, H_BATCH),
    time_ms: intHeader(hd, H_TIME),
    requests_through: intHeader(hd, H_REQUESTS_THROUGH),
    input_records: intHeader(hd, H_INPUTS),
    state_root: hd.get(H_STATE_ROOT),
    fills_root: hd.get(H_FILLS_ROOT),
    leader: hd.get(H_LEADER),
  };
  if (body_bytes % RECORD_BYTES !== 0 || h.input_records * RECORD_BYTES > body_bytes) {
    throw new Error(`event stream: batch ${h.batch_id} body of ${body_bytes} bytes does not hold ${h.input_records} inputs and whole events`);
  }
  return h;
}

/** Message id of batch `batch_id` in the event stream (a retried publish is stored once). */
export function batchMessageId(batch_id: number): string {
  return `batch.${batch_id}`;
}

/** How long a role waits for JetStream at start (a cluster forming elects its meta leader first: ~2-5 s). */
export const JETSTREAM_READY_MS_MAX = 30_000;

/** The JetStream manager once the cluster answers JetStream requests (bounded wait). */
export async function jetStreamReady(nc: NatsConnection, wait_ms_max: number): Promise<JetStreamManager> {
  const deadline = Date.now() + wait_ms_max;
  for (;;) {
    try {
      return await jetstreamManager(nc, { timeout: 1000 });
    } catch (e) {
      if (Date.now() >= deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** What every role needs to reach the logs. */
export interface LogSettings {
  /** Replicas of each stream and of the lease bucket (3: survives one NATS node). */
  replicas: number;
}

function streamConfig(name: string, subject: string, replicas: number): Partial<StreamConfig> & { name: string } {
  return {
    name,
    subjects: [subject],
    storage: 'file' as StreamConfig['storage'],
    num_replicas: replicas,
    max_msg_size: LOG_MESSAGE_BYTES_MAX,
    duplicate_window: DUPLICATE_WINDOW_MS * 1_000_000,
    // Readers fetch by sequence from any replica: the gateways and DA roles always
    // (log_reader_seq.ts), the matcher while no consumer can be created (log_reader.ts).
    // nats-server 2.9.10 accepts setting it on an existing stream but left direct gets unanswered
    // in our test: streams made without it are read through STREAM.MSG.GET (the stream leader).
    allow_direct: true,
    // Headers only (Nats-Sequence: a few hundred bytes), the wake-up of readers without a
    // consumer; a stream made before this has none and its readers poll.
    ...(name === EVENT_STREAM ? { republish: { src: subject, dest: EVENT_TIP_SUBJECT, headers_only: true } } : {}),
  };
}

/**
 * JetStream's refusal to place a stream's replicas (err_code 10005, "no suitable peers for
 * placement"): fewer servers of the cluster are up and known to its meta layer than the stream's
 * replicas. A cluster that is still forming answers so for a moment after JetStream itself is up
 * (seen in CI: a role started right after its NATS nodes exited on it), so the creation is tried
 * again until JETSTREAM_READY_MS_MAX, as jetStreamReady waits for JetStream.
 */
const NO_PLACEMENT_ERR_CODE = 10005;
const PLACEMENT_RETRY_MS = 200;

function isNoPlacement(e: unknown): boolean {
  const api = (e as { api_error?: { err_code?: unknown } } | null)?.api_error;
  if (api?.err_code === NO_PLACEMENT_ERR_CODE) return true;
  return e instanceof Error && e.message.includes('no suitable peers for placement');
}

/**
 * Adds a stream, trying again while the cluster cannot place its replicas yet (isNoPlacement), until
 * `deadline_ms` (Date.now() time); any other refusal is thrown at once.
 */
export async function addStreamPlaced(jsm: JetStreamManager, config: Parameters<JetStreamManager['streams']['add']>[0], deadline_ms: number): Promise<void> {
  for (;;) {
    try {
      await jsm.streams.add(config);
      return;
    } catch (e) {
      if (!isNoPlacement(e) || Date.now() >= deadline_ms) throw e;
      await new Promise((r) => setTimeout(r, PLACEMENT_RETRY_MS));
    }
  }
}

/**
 * Creates both streams when missing (every role calls it; the first wins, the others find them).
 * While the cluster cannot place the replicas yet it waits (isNoPlacement), at most
 * `wait_ms_max` in all; any other refusal is thrown at once. Returns the manager for stream info.
 */
export async function ensureStreams(nc: NatsConnection, settings: LogSettings, wait_ms_max = JETSTREAM_READY_MS_MAX): Promise<JetStreamManager> {
  const deadline = Date.now() + wait_ms_max;
  const jsm = await jetStreamReady(nc, wait_ms_max);
  for (const [name, subject] of [[REQUEST_STREAM, REQUEST_SUBJECT], [EVENT_STREAM, EVENT_SUBJECT]] as const) {
    for (;;) {
      try {
        await jsm.streams.info(name);
        break;
      } catch {
        try {
          await addStreamPlaced(jsm, streamConfig(name, subject, settings.replicas), deadline);
          break;
        } catch (e) {
          // Another role created it in between: fine if it exists now.
          const exists = await jsm.streams.info(name).then(() => true, () => false);
          if (exists) break;
          throw e;
        }
      }
    }
  }
  return jsm;
}

