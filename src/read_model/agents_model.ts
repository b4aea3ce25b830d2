// The front's view of agent keys (src/engine/agents.ts), built only from committed AGENT events:
// GET /account/:address/agents answers from it, and the signed routes check a request's signer
// against it before the request goes to the engine. The engine re-checks at apply time (by batch
// time), so this view being a batch behind never lets a revoked or expired agent through.
import type { CanonicalAgentUser } from '../engine/api.js';
import { AgentField, type EventFields } from '../ring/event_records.js';

export interface AgentView {
  agent: number;
  name: string;
  valid_until_ms: number;
  nonce_high_water: number;
}

export class AgentsModel {
  /** user account -> agent account -> its entry (expired ones stay until the engine prunes them). */
  private readonly users = new Map<number, Map<number, AgentView>>();
  private readonly floors = new Map<number, number>();
  /** Agent entries of all users together: 0 lets the signed routes skip the account lookup (liveAgents). */
  private entries = 0;

  apply(e: EventFields): void {
    const user = e.field(AgentField.ACCOUNT);
    const agent = e.field(AgentField.AGENT);
    const valid_until_ms = e.field(AgentField.VALID_UNTIL_MS);
    let mine = this.users.get(user);
    if (mine === undefined) this.users.set(user, mine = new Map());
    if (valid_until_ms === 0) {
      if (mine.delete(agent)) this.entries--;
    } else {
      if (!mine.has(agent)) this.entries++;
      mine.set(agent, { agent, name: e.clientOrderId(), valid_until_ms, nonce_high_water: e.field(AgentField.NONCE_HIGH_WATER) });
    }
    const floor = e.field(AgentField.NONCE_FLOOR);
    if (floor > 0) this.floors.set(user, floor);
  }

  /** The user's agent entries, ascending by agent (expired ones included; the caller filters by time). */
  of(user: number): AgentView[] {
    const mine = this.users.get(user);
    return mine === undefined ? [] : [...mine.values()].sort((x, y) => x.agent - y.agent);
  }

  /** Whether `agent` is a live agent of `user` at `time_ms`. */
  isLive(user: number, agent: number, time_ms: number): boolean {
    const e = this.users.get(user)?.get(agent);
    return e !== undefined && e.valid_until_ms > time_ms;
  }

  /** Whether any user has an agent entry (expired ones included). */
  get any(): boolean {
    return this.entries > 0;
  }

  /** Whether the user has any agent entry (the signed routes look for an agent signer only then). */
  hasAny(user: number): boolean {
    const mine = this.users.get(user);
    return mine !== undefined && mine.size > 0;
  }

  nonceFloor(user: number): number {
    return this.floors.get(user) ?? 0;
  }

  exportState(): CanonicalAgentUser[] {
    const ids = new Set([...this.users.keys(), ...this.floors.keys()]);
    return [...ids].sort((x, y) => x - y)
      .map((account) => ({ account, nonce_floor: this.nonceFloor(account), agents: this.of(account) }))
      .filter((u) => u.nonce_floor > 0 || u.agents.length > 0);
  }

  importState(rows: readonly CanonicalAgentUser[]): void {
    for (const u of rows) {
      if (u.nonce_floor > 0) this.floors.set(u.account, u.nonce_floor);
      this.users.set(u.account, new Map(u.agents.map((a) => [a.agent, { ...a }])));
    }
    this.entries = 0;
    for (const mine of this.users.values()) this.entries += mine.size;
  }
}
