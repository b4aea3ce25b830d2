// cancel_on_disconnect (DECISIONS "WebSocket"): when an opted-in connection closes, the front
// submits the DISCONNECT_CANCEL operator request for its address (rule cancel_on_disconnect,
// journaled and published as such); the engine cancels the address's resting orders.
import { emptyRequest, RequestKind } from '../../engine/types.js';
import { encodeConsent, OperatorRule } from '../../ring/consent.js';
import type { MatcherLink } from '../matcher_link.js';
import { componentLog } from '../../util/log.js';

const log = componentLog('ws');

/**
 * A cancel on disconnect that finds the request ring full is retried every 20 ms for up to 500 ms
 * after the close: half of the promised second, leaving the other half for the batch to commit.
 */
const DISCONNECT_RETRY_EVERY_MS = 20;
const DISCONNECT_RETRY_MS_MAX = 500;

export interface DisconnectCancelStats {
  /** Cancel-on-disconnect requests submitted, and those lost to a request ring full for 500 ms. */
  disconnect_cancels: number;
  disconnect_cancels_lost: number;
}

/** Submits the DISCONNECT_CANCEL of `address`, whose connection closed at `closed_ms`, retrying a full ring. */
export function cancelOnDisconnect(link: MatcherLink, address: string, closed_ms: number, stats: DisconnectCancelStats): void {
  const r = emptyRequest();
  r.kind = RequestKind.DISCONNECT_CANCEL;
  const bytes = Buffer.from(address.slice(2), 'hex');
  const consent = encodeConsent({ origin: 'operator', rule: OperatorRule.CANCEL_ON_DISCONNECT });
  const p = link.requests.submit(r, bytes, address, null, consent);
  if (p !== null) {
    stats.disconnect_cancels++;
    p.catch((e: unknown) => log.error('ringbook: cancel on disconnect failed', e, { address }));
    return;
  }
  if (Date.now() - closed_ms < DISCONNECT_RETRY_MS_MAX) {
    setTimeout(() => cancelOnDisconnect(link, address, closed_ms, stats), DISCONNECT_RETRY_EVERY_MS);
  } else {
    stats.disconnect_cancels_lost++;
    log.error(`ringbook: cancel on disconnect of ${address} not submitted: the request ring stayed full`, undefined, { address });
  }
}
