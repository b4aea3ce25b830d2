// The leader lease's safety rule (docs/scale-out.md, "The lease and the fence"): a leader whose
// renewals are not confirmed stops leading (no batch, no status message, /status not `leader`)
// a safety margin before its key can expire on the NATS nodes, so no standby can take the lease
// while it still acts. Real nats-server processes and matcher roles on loopback:
// - the NATS node the leader is connected to is frozen (SIGSTOP) past the lease TTL: the leader
//   can neither renew nor write, but its own process runs and answers /status. Before the rule it
//   kept saying `leader` (a renewal NATS did not answer "changed nothing") while a standby took the
//   expired key and led: two leaders at one poll, the symptom a NATS-node-kill run showed.
// - the leader process itself is frozen past the TTL, a status request waits in its socket, then
//   it is resumed: its first answer must not be `leader` (it used to be, until a renewal came back),
//   and it sends no batch after the resume: none of its batches is stored after the SIGCONT, none
//   of its attempts is refused by the fence (what it had in flight at the SIGSTOP is stored while it
//   is stopped, within its lease: docs/scale-out.md, "A frozen leader process").
// In the first case the leader is retrying a batch when it is cut off (the journal's test seam fails
// its publishes, then the attempt after goes into the frozen node's socket): it must give the batch
// up unconfirmed and start over from the log, and the attempt the frozen node delivers on its
// resume must be refused by the fence. Every poll asks all matchers at once; the stream is read at the end: one batch per sequence,
// numbers consecutive (no fork, no repeat), and the frozen leader appended nothing after the new
// leader's first batch. Waits are bounded in lease TTLs; no assertion on how fast anything is.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { BatchHeader } from '../../src/cluster/log_format.js';
import { sendBatchRequest } from '../../src/cluster/batch_request.js';
import type { MatcherStatus } from '../../src/cluster/matcher_role.js';
import type { StartedServer } from '../server/harness.js';
import {
  eventStreamBatches, eventStreamStored, leadingFromGenesis, LEASE_TTL_MS, matcherStatus, settledMatchers, startTestCluster, waitFor, type StoredBatch,
  type TestCluster,
} from './cluster_helpers.js';

let c: TestCluster;
let nc: NatsConnection;
/** The first leader's store seam (RINGBOOK_TEST_JOURNAL_FAULT_FILE): 'write' fails its publishes. */
let fault_dir = '';
let fault_file = '';
/** Polls of every matcher's /status: one every POLL_EVERY_MS, at most this many per phase. */
const POLL_EVERY_MS = Math.floor(LEASE_TTL_MS / 10);
/** A standby's takeover after the frozen node (elections of what it led take seconds on 2.9): bounded here. */
const TAKEOVER_WAIT_LEASE_TTLS = 40;
/** Polls after the new leader's first batch, before the frozen one is resumed. */
const POLLS_AFTER_TAKEOVER = 20;

beforeAll(async () => {
  c = await startTestCluster();
  const urls = c.nats.urls();
  // The first leader talks to node 0 only; the standbys and the test to nodes 1 and 2, so that
  // freezing node 0 cuts the leader off while the rest of the cluster keeps a quorum.
  fault_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-lease-fence-'));
  fault_file = path.join(fault_dir, 'fault');
  const first = await c.startMatcher('old', { RINGBOOK_NATS_URLS: urls[0], RINGBOOK_TEST_JOURNAL_FAULT_FILE: fault_file });
  await leadingFromGenesis(first);
  const rest = urls.slice(1).join(',');
  await Promise.all([c.startMatcher('m2', { RINGBOOK_NATS_URLS: rest }), c.startMatcher('m3', { RINGBOOK_NATS_URLS: rest })]);
  nc = await connect({ servers: urls.slice(1) });
}, 60_000);

afterAll(async () => {
  // How often a lease lapsed (a leader that could not confirm a renewal in time): printed, for
  // the rule's cost on a loaded box; the tests' freezes cause some of them.
  for (const [id, m] of c?.matchers ?? []) {
    const lapses = m.output().stderr.split('lease renewal not confirmed').length - 1;
    console.log(`lease fence: ${id} stepped down on a lapsed lease ${lapses} times`);
  }
  for (const n of c?.nats.nodes ?? []) n.proc?.kill('SIGCONT');
  for (const m of c?.matchers.values() ?? []) m.proc.kill('SIGCONT');
  await nc?.close();
  await c?.stop();
  if (fault_dir !== '') fs.rmSync(fault_dir, { recursive: true, force: true });
});

interface Poll {
  at_ms: number;
  statuses: MatcherStatus[];
}

/** Every matcher's /status, asked at once. */
async function pollAll(): Promise<Poll> {
  const at_ms = Date.now();
  return { at_ms, statuses: await Promise.all([...c.matchers.values()].map(matcherStatus)) };
}

function leadersOf(p: Poll): string[] {
  return p.statuses.filter((s) => s.role === 'leader').map((s) => s.node_id);
}

/** Asks the leader for a batch (an empty one: the load of these tests), as a gateway's chain link does. */
function askBatch(after_batch_id: number): void {
  const e = sendBatchRequest(nc, { gateway: 'lease-test', after_batch_id });
  if (e !== null) throw e;
}

/**
 * How many of a matcher's publishes the event stream refused for another leader's batch (the
 * store's start-over lines, matcher_store.ts): an attempt sent after another leader appended.
 */
function fenceRefusals(m: StartedServer): number {
  const e = m.output().stderr;
  return e.split('the event stream moved past sequence').length - 1 + e.split("the event stream holds another leader's batch").length - 1;
}

/** One history: sequence i holds batch i - 1, so no batch number twice and no gap. */
function expectOneHistory(batches: BatchHeader[]): void {
  expect(batches.map((b) => b.batch_id)).toEqual(batches.map((_, i) => i));
}

/**
 * Polls every matcher until `done` holds of a poll (at most `polls_max` polls), failing at the
 * first poll with two leaders. Sends a batch request each poll so that whoever leads cuts.
 */
async function pollUntil(what: string, polls_max: number, done: (p: Poll) => boolean, seen: Poll[]): Promise<Poll> {
  for (let i = 0; i < polls_max; i++) {
    const p = await pollAll();
    seen.push(p);
    const leaders = leadersOf(p);
    expect(leaders.length, `two leaders at one poll (${what}, poll ${i}): ${JSON.stringify(p.statuses.map((s) => [s.node_id, s.role, s.batch_id]))}`)
      .toBeLessThanOrEqual(1);
    if (done(p)) return p;
    askBatch(Math.max(...p.statuses.map((s) => s.batch_id)));
    await new Promise((r) => setTimeout(r, POLL_EVERY_MS));
  }
  throw new Error(`${what}: not seen in ${polls_max} polls; last: ${JSON.stringify(seen[seen.length - 1]?.statuses)}`);
}

describe('the leader lease on a real NATS cluster', () => {
  it('a leader cut off from NATS (its node frozen past the TTL) stops leading before a standby takes over: never two leaders, one history', async () => {
    const old = c.matchers.get('old') as StartedServer;
    // The first leader cuts a batch of its own (it leads, it can write).
    await waitFor('a batch cut by the first leader', 10 * LEASE_TTL_MS, async () => {
      const s = await matcherStatus(old);
      if (s.role === 'leader' && s.batch_id >= 1) return s;
      askBatch(s.batch_id);
      return undefined;
    }, POLL_EVERY_MS);
    await settledMatchers([...c.matchers.values()], 15 * LEASE_TTL_MS);
    // A batch in flight when it is cut off: its publishes fail (the seam) and are retried.
    const held = (await matcherStatus(old)).batch_id + 1;
    fs.writeFileSync(fault_file, 'write');
    await waitFor(`the first leader retrying batch ${held}`, 10 * LEASE_TTL_MS, async () => {
      askBatch(held - 1);
      return old.output().stderr.includes(`batch ${held} not stored yet`) || undefined;
    }, POLL_EVERY_MS);
    const node0 = c.nats.nodes[0].proc;
    expect(node0).not.toBeNull();
    const seen: Poll[] = [];
    node0!.kill('SIGSTOP');
    // Its next attempt goes out for real, into the frozen node's socket (delivered on the resume).
    fs.writeFileSync(fault_file, '');
    let took_over: Poll;
    try {
      took_over = await pollUntil('a standby leads and cuts a batch', TAKEOVER_WAIT_LEASE_TTLS * 10, (p) =>
        p.statuses.some((s) => s.node_id !== 'old' && s.role === 'leader' && s.batches_cut > 0), seen);
      // The frozen side stays out for a while longer: no flapping back.
      for (let i = 0; i < POLLS_AFTER_TAKEOVER; i++) {
        await pollUntil('the new leader keeps leading', 1, () => true, seen);
        await new Promise((r) => setTimeout(r, POLL_EVERY_MS));
      }
    } finally {
      node0!.kill('SIGCONT');
    }
    const new_leader = leadersOf(took_over)[0];
    const old_status = took_over.statuses.find((s) => s.node_id === 'old') as MatcherStatus;
    expect(old_status.role).toBe('standby');
    // Resumed: the old leader's connection works again; it follows the new leader's batches.
    await pollUntil('the old leader following the new one', TAKEOVER_WAIT_LEASE_TTLS * 10, (p) => {
      const o = p.statuses.find((s) => s.node_id === 'old') as MatcherStatus;
      const n = p.statuses.find((s) => s.node_id === new_leader) as MatcherStatus;
      return o.role === 'standby' && n.role === 'leader' && o.batch_id === n.batch_id && o.state_root === n.state_root;
    }, seen);
    const held_lines = old.output().stderr.split('\n').filter((l) => l.includes(`batch ${held}`) || l.includes('lease renewal not confirmed'));
    console.log(`lease fence: the first leader on its held batch ${held}:\n${held_lines.map((l) => '  ' + l.slice(0, 300)).join('\n')}`);
    // The held batch was given up unconfirmed (no attempt after the lapse), and the engine rebuilt.
    expect(old.output().stderr).toContain(`batch ${held}: the lease lapsed before the event stream confirmed it`);
    const batches = await eventStreamBatches(nc);
    expectOneHistory(batches);
    const first_new = batches.findIndex((b) => b.leader === new_leader);
    // The held batch is given up by its leader, but one of its attempts went out into the frozen
    // node's socket and is delivered on the resume: either the new leader's first batch took its
    // place (the attempt then fails the stream's expected-sequence fence), or that stale write
    // landed first and the new leader's first batch follows it (docs/scale-out.md, "The lease and
    // the fence": it costs the new leader a rebuild). Both are one history; seen 1 in 4 CI runs.
    if (first_new === held + 1) expect(batches[held].leader, `batch ${held} before the new leader's first`).toBe('old');
    else expect(first_new).toBe(held);
    expect(batches.slice(first_new).filter((b) => b.leader === 'old'), 'batches appended by the old leader after the new one\'s first').toEqual([]);
    console.log(`lease fence (frozen NATS node): ${seen.length} polls of 3 matchers, never two leaders; ${new_leader} took over at batch ${first_new}, ` +
      `old leader's batches ${batches.filter((b) => b.leader === 'old').length}, stream ${batches.length} batches`);
  });

  it('a leader process frozen past the TTL answers its first status after the resume as a standby, and appends nothing', async () => {
    // One leader first (the previous test's, or whoever took over after a lapse on this shared box).
    const before = await pollUntil('one leader', TAKEOVER_WAIT_LEASE_TTLS * 10, (p) => leadersOf(p).length === 1, []);
    const leader_id = leadersOf(before)[0];
    const leader = c.matchers.get(leader_id) as StartedServer;
    // batches_cut counts from the matcher's start: a standby that led in the previous test had cut
    // already, so "batches_cut > 0" held at its takeover, before its first cut here (3 of 10 runs),
    // and the stream read could come before that cut, the frozen leader's pre-freeze batch last:
    // the likely cause of fresh-clone CI's failure at 651590f (docs/scale-out.md, "A frozen leader
    // process"), not a batch of the frozen leader's after the resume.
    const cut_before = new Map(before.statuses.map((s) => [s.node_id, s.batches_cut]));
    const refusals_before = fenceRefusals(leader);
    const seen: Poll[] = [];
    const stop_ms = Date.now();
    let cont_ms = 0;
    leader.proc.kill('SIGSTOP');
    let stale: MatcherStatus;
    let successor: MatcherStatus;
    try {
      const others = [...c.matchers.values()].filter((m) => m !== leader);
      successor = await waitFor('a standby to lead and cut', TAKEOVER_WAIT_LEASE_TTLS * LEASE_TTL_MS, async () => {
        const s = await Promise.all(others.map(matcherStatus));
        askBatch(Math.max(...s.map((x) => x.batch_id)));
        return s.find((x) => x.role === 'leader' && x.batches_cut > (cut_before.get(x.node_id) ?? 0));
      }, POLL_EVERY_MS);
      // Asked while frozen: the request waits in the socket and is the first thing it reads when resumed.
      const asked = matcherStatus(leader);
      await new Promise((r) => setTimeout(r, POLL_EVERY_MS));
      cont_ms = Date.now();
      leader.proc.kill('SIGCONT');
      stale = await asked;
    } finally {
      leader.proc.kill('SIGCONT');
    }
    expect(stale.role, `${leader_id}'s first answer after the resume, while ${successor.node_id} leads`).not.toBe('leader');
    await pollUntil('the frozen leader following the new one', TAKEOVER_WAIT_LEASE_TTLS * 10, (p) => {
      const o = p.statuses.find((s) => s.node_id === leader_id) as MatcherStatus;
      const n = p.statuses.find((s) => s.node_id === successor.node_id) as MatcherStatus;
      return o.role === 'standby' && o.batch_id === n.batch_id && o.state_root === n.state_root;
    }, seen);
    // A cut that returned is not yet one the stream holds (a lapse on this shared box can make the
    // successor give it up and start over): wait for a batch of the successor stored after the
    // SIGSTOP, asking for one.
    const stored = await waitFor('a batch of the successor in the stream', TAKEOVER_WAIT_LEASE_TTLS * LEASE_TTL_MS, async () => {
      const b = await eventStreamStored(nc);
      if (b.some((x) => x.stored_ms > stop_ms && x.header.leader === successor.node_id)) return b;
      askBatch(b.length - 1);
      return undefined;
    }, POLL_EVERY_MS);
    expectOneHistory(stored.map((b) => b.header));
    // The frozen leader sent nothing after the resume: a batch of its stored after the SIGCONT was
    // sent after it (a stopped process sends nothing), on a lease that had lapsed while it was
    // stopped; an attempt the fence refused shows as its start-over line. What it had in flight
    // at the SIGSTOP (in its socket, in the NATS node's queue) is stored while it is stopped.
    const frozen_after = stored.filter((b) => b.header.leader === leader_id && b.stored_ms > stop_ms);
    const at = (b: StoredBatch): string => `batch ${b.header.batch_id} stored ${b.stored_ms - stop_ms} ms after the SIGSTOP`;
    expect(frozen_after.filter((b) => b.stored_ms >= cont_ms).map(at), `${leader_id}'s batches stored after its SIGCONT (${cont_ms - stop_ms} ms)`).toEqual([]);
    expect(fenceRefusals(leader), `${leader_id}'s publishes refused by the fence after its resume`).toBe(refusals_before);
    const first_new = stored.findIndex((b) => b.stored_ms > stop_ms && b.header.leader === successor.node_id);
    expect(stored.slice(first_new).filter((b) => b.header.leader === leader_id).map(at)).toEqual([]);
    const last_before = stored.filter((b) => b.header.leader === leader_id && b.stored_ms <= stop_ms).pop();
    console.log(`lease fence (frozen leader process): ${leader_id} stopped ${cont_ms - stop_ms} ms, ${successor.node_id} took over at batch ` +
      `${stored[first_new].header.batch_id}; ${leader_id}'s last batch before: ${last_before === undefined ? 'none' : `${last_before.header.batch_id}, ` +
      `stored ${stop_ms - last_before.stored_ms} ms before the SIGSTOP`}; stored while it was stopped (in flight at the SIGSTOP): ` +
      `${frozen_after.length === 0 ? 'none' : frozen_after.map(at).join(', ')}`);
  });
});
