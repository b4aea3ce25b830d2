// The numbers of the engine's rules that DECISIONS fixes: referral duration and share, the
// forced-inclusion deadline, the dead-man switch's timeouts and which kinds may be forced, and the
// engine's unit for a ratio (parts per million). Both engines apply these (types.ts has the
// request vocabulary they are stated in).
import { RequestKind } from './types.js';

/** How long a referral shares the referred user's taker fees: 90 days (DECISIONS, "Referral"). */
export const REFERRAL_ACTIVE_MS = 90 * 24 * 3600 * 1000;
/** The referrer's share of each taker fee, in percent, floored (DECISIONS). */
export const REFERRAL_SHARE_PERCENT = 20;
/** A forced-inclusion entry is included at the latest this long after it was queued (DECISIONS). */
export const FORCE_INCLUSION_DEADLINE_MS = 24 * 3600 * 1000;
/** Dead-man switch timeouts (DECISIONS, "Dead-man switch"): 1 s to 24 h; 0 disarms. */
export const DEAD_MAN_TIMEOUT_MS_MIN = 1_000;
export const DEAD_MAN_TIMEOUT_MS_MAX = 86_400_000;
export function deadManTimeoutValid(timeout_ms: number): boolean {
  return timeout_ms === 0 || (timeout_ms >= DEAD_MAN_TIMEOUT_MS_MIN && timeout_ms <= DEAD_MAN_TIMEOUT_MS_MAX);
}
/** The request kinds a forced-inclusion payload may carry: the user-signed ones. */
export function forcibleKind(kind: number): boolean {
  return kind === RequestKind.PLACE || kind === RequestKind.CANCEL || kind === RequestKind.AMEND ||
    kind === RequestKind.CANCEL_ALL || kind === RequestKind.WITHDRAW || kind === RequestKind.REFER;
}

/** Parts per million in one (auto_cancel_ratio_ppm: the engine's unit for a ratio). */
export const PPM_ONE = 1_000_000;

/**
 * A ratio in (0, 1] as the wire and config write it -> the engine's parts per million. The one
 * conversion (config, the admin route); the answer converts back with ppmToRatio.
 */
export function ratioToPpm(ratio: number): number {
  return Math.round(ratio * PPM_ONE);
}

export function ppmToRatio(ppm: number): number {
  return ppm / PPM_ONE;
}
