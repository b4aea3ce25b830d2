// Who signed a request (DECISIONS, "Agent keys"; docs/api.md): the user itself, or, for the kinds
// an agent may sign (orders, cancels, amends, cancel-all, cancel-after and batch items of those),
// one of the user's agents that the read model holds live now. Anything else is INVALID_SIGNATURE,
// as a bad signature is. The front's check only spares the engine hopeless requests: the engine
// re-checks the signer at apply time against the agents live at the batch's time (a revocation
// earlier in the same batch wins there), and the verifier re-checks that the signature recovers to
// the signer the record names (src/da/consent_check.ts).
//
// Cost: the pool answers "did X sign this?" (one recovery per question), not "who signed?", so the
// candidates are asked in turn: first the signer that last signed for this user (a market maker
// signs with one agent: one recovery per request), then, when that fails, the others at once.
import { agentMaySign } from '../engine/agents.js';
import type { GatewayContext } from './context.js';
import type { SignedRequest } from './signed_requests.js';

export interface SignerVerdict {
  /** The message form that verified (journaled with the signature), or null: no candidate signed it. */
  message: string | null;
  /** Lowercase 0x address of the agent that signed, or null when the user did. */
  signer: string | null;
}

/** User -> the agent that last signed for it (absent: the user itself). Bounded by the users with agents. */
const last_agent = new WeakMap<GatewayContext, Map<string, string>>();

function lastAgents(ctx: GatewayContext): Map<string, string> {
  let m = last_agent.get(ctx);
  if (m === undefined) last_agent.set(ctx, m = new Map());
  return m;
}

/** The user's live agents now, as lowercase addresses (none when the kind is not an agent kind). */
function liveAgents(ctx: GatewayContext, parsed: SignedRequest): string[] {
  if (!agentCandidates(ctx, parsed)) return [];
  const rm = ctx.rm;
  const user = rm.account_by_address.get(parsed.address) as number;
  const now_ms = Date.now();
  return rm.agents.of(user).filter((a) => a.valid_until_ms > now_ms).map((a) => rm.address_by_account[a.agent]);
}

/** Whether the request's user has live agents that may sign its kind (then `verifySigner` is needed). */
export function agentCandidates(ctx: GatewayContext, parsed: SignedRequest): boolean {
  if (!agentMaySign(parsed.request.kind)) return false;
  const user = ctx.rm.account_by_address.get(parsed.address);
  return user !== undefined && ctx.rm.agents.hasAny(user);
}

export async function verifySigner(ctx: GatewayContext, parsed: SignedRequest): Promise<SignerVerdict> {
  const sigs = ctx.signatures;
  const agents = liveAgents(ctx, parsed);
  const last = lastAgents(ctx);
  const preferred = last.get(parsed.address);
  const first = preferred !== undefined && agents.includes(preferred) ? preferred : null;
  const m0 = await sigs.verifyAny(parsed.messages, parsed.signature_hex, first ?? parsed.address);
  if (m0 !== null) return { message: m0, signer: first };
  const rest = [...(first === null ? [] : [parsed.address]), ...agents.filter((a) => a !== first)];
  if (rest.length === 0) return { message: null, signer: null };
  const found = await Promise.all(rest.map((a) => sigs.verifyAny(parsed.messages, parsed.signature_hex, a)));
  const k = found.findIndex((m) => m !== null);
  if (k < 0) return { message: null, signer: null };
  const signer = rest[k] === parsed.address ? null : rest[k];
  if (signer === null) last.delete(parsed.address);
  else last.set(parsed.address, signer);
  return { message: found[k], signer };
}
