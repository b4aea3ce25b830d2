// Agent-key routes (docs/api.md, "Agent keys"): POST /agents, POST /agents/revoke (signed by the
// user, never by an agent: the signer rule of agent_signer.ts allows agents only for the trading
// kinds), GET /account/:address/agents (from the read model: committed state only).
import type { TemplatedApp } from 'uWebSockets.js';
import { getRoute, postRoute, type GatewayContext } from './context.js';
import { runSigned } from './signed_route.js';
import { parseAddress } from './params.js';
import { parseApproveAgent, parseRevokeAgent } from './signed_account_requests.js';
import { isBodyError } from './signed_body.js';
import { isoTime } from './views.js';

export function registerAgentRoutes(app: TemplatedApp, ctx: GatewayContext): void {
  const rm = ctx.rm;
  app.post('/agents', postRoute(ctx, { admin: false, stamped: true }, (reply, body) => {
    const parsed = parseApproveAgent(body);
    runSigned(ctx, reply, parsed, (o) => {
      if (isBodyError(parsed)) return;
      const r = parsed.request;
      reply.ok({
        user: parsed.address, agent: parsed.referrer, name: r.client_order_id,
        valid_until: isoTime(r.amount_units), valid_until_ms: r.amount_units, batch_id: String(o.batch_id),
      });
    });
  }));
  app.post('/agents/revoke', postRoute(ctx, { admin: false, stamped: true }, (reply, body) => {
    const parsed = parseRevokeAgent(body);
    runSigned(ctx, reply, parsed, (o) => {
      if (isBodyError(parsed)) return;
      reply.ok({ user: parsed.address, agent: parsed.referrer, revoked: true, batch_id: String(o.batch_id) });
    });
  }));
  app.get('/account/:address/agents', getRoute(ctx, (reply, req) => {
    const a = parseAddress(req.getParameter(0) ?? '');
    if (!a.ok) {
      reply.error('INVALID_REQUEST', a.message);
      return;
    }
    const account = rm.account_by_address.get(a.value);
    // Live at the engine's clock (the last committed batch): what the next batch will still accept
    // unless its own time has passed valid_until.
    const agents = account === undefined ? [] : rm.agents.of(account)
      .filter((x) => x.valid_until_ms > rm.batch_time_ms)
      .map((x) => ({
        agent: rm.address_by_account[x.agent], name: x.name, valid_until: isoTime(x.valid_until_ms),
        valid_until_ms: x.valid_until_ms, nonce_high_water: x.nonce_high_water,
      }));
    reply.ok({ address: a.value, agents, nonce_floor: account === undefined ? 0 : rm.agents.nonceFloor(account) });
  }));
}
