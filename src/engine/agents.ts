// Agent keys (DECISIONS, "Market-maker features"; docs/engine.md, "Agent keys"): a user approves
// another address to sign some of its requests (orders, cancels, amends, cancel-all, cancel-after),
// until a time of its choosing, and may revoke it. Agents are engine state because which agents are
// live decides which requests are accepted: the front checks a request's signer against its read
// model, but only the engine's check at apply time (by batch time) counts, so a revocation and an
// agent's order in the same batch are decided by their order in the batch, and a replay agrees.
//
// Per user: at most AGENTS_LIVE_MAX live entries {name, valid_until_ms, nonce_high_water}, one per
// agent account, and a nonce floor. Each signer has its own nonce high-water mark under its user
// (the user's own mark stays in the ledger), so a wallet and its agents sign concurrently without
// taking each other's nonces. A mark must never go back, or an agent's old signed requests could be
// replayed after it is approved again: an entry that leaves (revoked, or expired and pruned at the
// user's next approval) folds its mark into the floor, and a new entry's mark starts at the floor.
//
// This module holds the rules' constants and the fast engine's table; the reference engine keeps
// its own plain maps (src/engine/reference/), and the differential tests compare the two.
import type { CanonicalAgentUser } from './api.js';
import { RequestKind } from './types.js';
import { Reject } from './codes.js';
import type { EventSink } from './events.js';

/** Live agents per user (DECISIONS: "At most 10 live agents per user"). */
export const AGENTS_LIVE_MAX = 10;
/**
 * Furthest approval: 180 days after the batch time (Hyperliquid's API wallets allow 180 days too);
 * a key that must live longer is approved again.
 */
export const AGENT_VALIDITY_MS_MAX = 180 * 24 * 3600 * 1000;
/**
 * An agent's name: 1 to 16 of [A-Za-z0-9_.-]. 16 bytes is what the request record has room for
 * next to the agent's address (src/ring/request_records.ts); no colon, the signed message's separator.
 */
export const AGENT_NAME_BYTES_MAX = 16;
export const AGENT_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,16}$/;

/** The kinds an agent may sign for its user (never withdrawals, referrals, agent changes or force-include). */
export function agentMaySign(kind: number): boolean {
  return kind === RequestKind.PLACE || kind === RequestKind.CANCEL || kind === RequestKind.AMEND ||
    kind === RequestKind.CANCEL_ALL || kind === RequestKind.CANCEL_AFTER;
}

/**
 * The kinds whose signer the engine checks (the user-signed kinds): only for these does the
 * matcher resolve the record's signer words; on any other kind they mean nothing and stay 0.
 */
export function signerChecked(kind: number): boolean {
  return agentMaySign(kind) || kind === RequestKind.WITHDRAW || kind === RequestKind.REFER ||
    kind === RequestKind.FORCE_INCLUDE || kind === RequestKind.APPROVE_AGENT || kind === RequestKind.REVOKE_AGENT;
}

/** Reject.NONE, or why APPROVE_AGENT's own values are refused (before any state is read). */
export function approvalRejectReason(name: string, valid_until_ms: number, batch_time_ms: number): number {
  if (!AGENT_NAME_PATTERN.test(name)) return Reject.AGENT_NAME_INVALID;
  if (!(valid_until_ms > batch_time_ms && valid_until_ms - batch_time_ms <= AGENT_VALIDITY_MS_MAX)) return Reject.AGENT_VALIDITY_INVALID;
  return Reject.NONE;
}

interface AgentEntry {
  name: string;
  valid_until_ms: number;
  nonce_high_water: number;
}

interface UserAgents {
  nonce_floor: number;
  agents: Map<number, AgentEntry>;
}

/** The fast engine's agent table: a Map per user that has agents (market makers; cold next to the books). */
export class AgentTable {
  private readonly users = new Map<number, UserAgents>();

  constructor(private readonly live_max: number = AGENTS_LIVE_MAX) {}

  /** Reject.NONE, or why `signer` may not sign a request of `kind` with `nonce` for `user` at `time_ms`. */
  checkSigner(user: number, signer: number, kind: number, nonce: number, time_ms: number): number {
    if (!agentMaySign(kind)) return Reject.AGENT_NOT_ALLOWED;
    const e = this.users.get(user)?.agents.get(signer);
    if (e === undefined || e.valid_until_ms <= time_ms) return Reject.AGENT_NOT_APPROVED;
    if (!(nonce > e.nonce_high_water)) return Reject.NONCE_NOT_ABOVE_HIGH_WATER;
    return Reject.NONE;
  }

  /** After checkSigner passed and the request is accepted: the agent's new mark, and its AGENT event. */
  markNonce(user: number, signer: number, nonce: number, out: EventSink): void {
    const u = this.users.get(user) as UserAgents;
    const e = u.agents.get(signer) as AgentEntry;
    e.nonce_high_water = nonce;
    out.agent(user, signer, e.valid_until_ms, nonce, u.nonce_floor, e.name);
  }

  /** Reject.NONE, or AGENTS_MAX when approving `agent` would make an 11th live agent at `time_ms`. */
  checkApprove(user: number, agent: number, time_ms: number): number {
    const u = this.users.get(user);
    if (u === undefined) return Reject.NONE;
    const current = u.agents.get(agent);
    if (current !== undefined && current.valid_until_ms > time_ms) return Reject.NONE;
    let live = 0;
    for (const e of u.agents.values()) if (e.valid_until_ms > time_ms) live++;
    return live >= this.live_max ? Reject.AGENTS_MAX : Reject.NONE;
  }

  /**
   * Accepted approval: prunes the user's entries no longer live at `time_ms` (ascending agent, each
   * folded into the floor, each an AGENT event with valid_until 0), then sets the agent's entry (a
   * live one keeps its mark; a new one starts at the floor).
   */
  approve(user: number, agent: number, name: string, valid_until_ms: number, time_ms: number, out: EventSink): void {
    let u = this.users.get(user);
    if (u === undefined) {
      u = { nonce_floor: 0, agents: new Map() };
      this.users.set(user, u);
    }
    const dead = [...u.agents.entries()].filter(([, e]) => e.valid_until_ms <= time_ms).map(([a]) => a).sort((x, y) => x - y);
    for (const a of dead) this.remove(u, user, a, out);
    const e = u.agents.get(agent);
    if (e === undefined) u.agents.set(agent, { name, valid_until_ms, nonce_high_water: u.nonce_floor });
    else {
      e.name = name;
      e.valid_until_ms = valid_until_ms;
    }
    const now = u.agents.get(agent) as AgentEntry;
    out.agent(user, agent, valid_until_ms, now.nonce_high_water, u.nonce_floor, name);
  }

  /** Whether `agent` has an entry of `user` (live or expired, not yet pruned): what REVOKE_AGENT needs. */
  has(user: number, agent: number): boolean {
    return this.users.get(user)?.agents.has(agent) === true;
  }

  /** Accepted revocation (after `has`): the entry leaves, its mark folded into the floor. */
  revoke(user: number, agent: number, out: EventSink): void {
    this.remove(this.users.get(user) as UserAgents, user, agent, out);
  }

  private remove(u: UserAgents, user: number, agent: number, out: EventSink): void {
    const e = u.agents.get(agent) as AgentEntry;
    u.agents.delete(agent);
    if (e.nonce_high_water > u.nonce_floor) u.nonce_floor = e.nonce_high_water;
    out.agent(user, agent, 0, 0, u.nonce_floor, '');
  }

  canonical(): CanonicalAgentUser[] {
    return [...this.users.entries()]
      .filter(([, u]) => u.nonce_floor > 0 || u.agents.size > 0)
      .sort((x, y) => x[0] - y[0])
      .map(([account, u]) => ({
        account, nonce_floor: u.nonce_floor,
        agents: [...u.agents.entries()].sort((x, y) => x[0] - y[0])
          .map(([agent, e]) => ({ agent, name: e.name, valid_until_ms: e.valid_until_ms, nonce_high_water: e.nonce_high_water })),
      }));
  }

  load(rows: readonly CanonicalAgentUser[]): void {
    for (const row of rows) {
      this.users.set(row.account, {
        nonce_floor: row.nonce_floor,
        agents: new Map(row.agents.map((a) => [a.agent, { name: a.name, valid_until_ms: a.valid_until_ms, nonce_high_water: a.nonce_high_water }])),
      });
    }
  }
}
