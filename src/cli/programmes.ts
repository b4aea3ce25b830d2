// `ringbook referral register | show` and `ringbook force-include <kind> | status`: the referral
// programme and the forced-inclusion inbox (docs/api.md "Referrals", "Forced
// inclusion"), on the SDK (src/client). Decimal prices and quantities are converted with the money
// module, as in trader.ts.
import {
  forcedResultError, formatUnits, RingbookClient, type ForcedRequest, type ForceInclusion, type ForceInclusionStatus,
  type ReferralStats,
} from '../client/index.js';
import {
  EXIT_ERROR, EXIT_OK, int, KEY_FLAG_USAGE, orderFlags, type ParsedArgs, req, runCommand, str, table,
  TRADING_COMMON_USAGE, TRADING_EXITS_USAGE, units, url, UsageError, wallet,
} from './common.js';
import { isAddress } from '../util/address.js';


export const REFERRAL_USAGE = `usage: ringbook referral register --referrer <address> [options]
       ringbook referral show [<address>] [options]

register   Registers the key's account as referred by <address> (signed by the key; both must
           be accounts already; a user's referrer is set once and never changes). The referrer
           then earns 20% (floored) of every taker fee the key's account pays for 90 days.
show       An address's referral statistics: users referred, earnings (USDC), active referrals,
           and who referred it. Default address: the key's.

options:
  --referrer <address>       register: the referring account
  --address <address>        show: the address (or give it as the positional argument)
  --nonce <n>                register: explicit nonce (default: microsecond clock, retried on DUPLICATE_NONCE)
${KEY_FLAG_USAGE}
${TRADING_COMMON_USAGE}

${TRADING_EXITS_USAGE}`;

export const FORCE_INCLUDE_USAGE = `usage: ringbook force-include <kind> [kind options] [options]
       ringbook force-include payload <0x hex of a signed request body> [options]
       ringbook force-include status <entry_id> [options]

Queues a signed request in the forced-inclusion inbox, past the sequencer: the engine includes
it in order, normally at the start of the next batch and always within 24 hours. Envelopes have
their own nonce sequence per account, apart from the trading nonces: the envelope's nonce must be
above the account's last envelope nonce; the request's own nonce is checked against the trading
high-water mark when it is included. 'payload' wraps a request already signed (e.g. one the
sequencer ignored) as is; a <kind> is signed now at the next trading nonce.

kinds and their options (decimals in whole units, as for \`ringbook order\`):
  order       --market <id> --side bid|ask --quantity <d> [--price <d>] [--type limit|market]
              [--tif gtc|ioc|fok|post_only] [--client-id <id>]
  cancel      --order-id <n> | --client-id <id>
  amend       --order-id <n> --price <d> --quantity <d>     (new open quantity)
  cancel-all  [--market <id>]                                (default: every market)
  withdrawal  --asset <symbol> --amount <integer>            (smallest on-chain unit: wei for ETH)
  referral    --referrer <address>

options:
  --nonce <n>                the envelope's nonce (default: the clock)
  --payload-nonce <n>        the request's nonce (default: the clock)
  --no-kind                  leave the "kind" member out of the payload (the server infers it)
  --wait                     wait until the entry is included and print its result; exit 1 when
                             the engine refused the forced request
  --timeout <s>              with --wait: give up after this long (default 60)
${KEY_FLAG_USAGE}
${TRADING_COMMON_USAGE}

status <entry_id> prints an entry: pending, or included with its batch and result.

${TRADING_EXITS_USAGE}`;

// ------------------------------------------------------------------ referral

function printStats(s: ReferralStats): void {
  console.log(`address          ${s.address}`);
  console.log(`referral code    ${s.referral_code}`);
  console.log(`referred users   ${s.referred_users} (${s.active_referrals.length} active)`);
  console.log(`total earnings   ${formatUnits(Number(s.total_earnings_usdc))} USDC`);
  console.log(`active until     ${s.active_until ?? '-'}`);
  console.log(`referred by      ${s.referred_by ? `${s.referred_by.referrer} (sharing until ${s.referred_by.active_until})` : '-'}`);
  if (s.referrals.length > 0) {
    console.log(table(['referred user', 'active', 'active until', 'earned USDC'], s.referrals.map((r) => [
      r.address, r.active ? 'yes' : 'no', r.active_until, formatUnits(Number(r.earned_usdc)),
    ])));
  }
}

function nonceFlag(args: ParsedArgs): number | undefined {
  return str(args, 'nonce') === undefined ? undefined : int(args, 'nonce', 0, 1);
}

export async function referralCommand(args: ParsedArgs): Promise<number> {
  return runCommand(args, REFERRAL_USAGE, async () => {
    const sub = args.positional[1];
    if (sub === 'register') {
      const referrer = req(args, 'referrer');
      if (!isAddress(referrer)) throw new UsageError('--referrer must be 0x + 40 hex digits');
      const nonce = nonceFlag(args);
      const client = new RingbookClient({ base_url: url(args), wallet: wallet(args) });
      const r = await client.registerReferral({ referrer, ...(nonce !== undefined ? { nonce } : {}) });
      if (args.flags.has('json')) console.log(JSON.stringify(r));
      else console.log(`${r.referred} is referred by ${r.referrer}; fee sharing until ${r.active_until} (batch ${r.batch_id})`);
      return EXIT_OK;
    }
    if (sub === 'show') {
      let address = args.positional[2] ?? str(args, 'address');
      if (address === undefined) {
        if (!args.flags.has('key') && !process.env.RINGBOOK_KEY) throw new UsageError('give an address (or --key)');
        address = wallet(args).address;
      }
      if (!isAddress(address)) throw new UsageError('the address must be 0x + 40 hex digits');
      const s = await new RingbookClient({ base_url: url(args) }).referral(address);
      if (args.flags.has('json')) console.log(JSON.stringify(s));
      else printStats(s);
      return EXIT_OK;
    }
    throw new UsageError(sub === undefined ? 'referral needs a subcommand: register or show' : `unknown referral subcommand ${JSON.stringify(sub)}`);
  });
}

// ------------------------------------------------------------------ force-include

const KIND_ALIASES: Record<string, ForcedRequest['kind']> = {
  order: 'order', cancel: 'cancel', amend: 'amend', 'cancel-all': 'cancel_all', cancel_all: 'cancel_all',
  withdrawal: 'withdrawal', withdraw: 'withdrawal', referral: 'referral',
};

function orderIdFlag(args: ParsedArgs): string {
  const id = req(args, 'order-id');
  if (!/^(0|[1-9][0-9]*)$/.test(id)) throw new UsageError('--order-id must be a non-negative integer');
  return id;
}

/** The forced request a command line describes (same flags as the direct commands). */
export function forcedRequestOf(kind: ForcedRequest['kind'], args: ParsedArgs): ForcedRequest {
  switch (kind) {
    case 'order':
      return { kind, ...orderFlags(args) };
    case 'cancel': {
      const client_order_id = str(args, 'client-id');
      if (!args.flags.has('order-id') && client_order_id === undefined) throw new UsageError('--order-id or --client-id is required');
      return {
        kind,
        ...(args.flags.has('order-id') ? { order_id: orderIdFlag(args) } : {}),
        ...(client_order_id !== undefined ? { client_order_id } : {}),
      };
    }
    case 'amend':
      return { kind, order_id: orderIdFlag(args), price: units(args, 'price'), quantity: units(args, 'quantity') };
    case 'cancel_all': {
      const market_id = str(args, 'market');
      return { kind, ...(market_id !== undefined ? { market_id } : {}) };
    }
    case 'withdrawal': {
      const asset = req(args, 'asset');
      const amount = req(args, 'amount');
      if (!/^[1-9][0-9]*$/.test(amount)) throw new UsageError('--amount must be a positive integer of the smallest on-chain unit (wei for ETH)');
      return { kind, asset, amount };
    }
    case 'referral': {
      const referrer = req(args, 'referrer');
      if (!isAddress(referrer)) throw new UsageError('--referrer must be 0x + 40 hex digits');
      return { kind, referrer };
    }
  }
}

function printStatus(st: ForceInclusionStatus): void {
  console.log(`entry ${st.entry_id} (${st.kind}) by ${st.user}: ${st.status}`);
  console.log(`nonces     envelope ${st.nonce}  payload ${st.payload_nonce}`);
  console.log(`queued     ${st.queued_at}  deadline ${st.deadline}`);
  if (st.status === 'included') {
    console.log(`included   ${st.included_at ?? '-'} in batch ${st.included_batch_id ?? '-'}`);
    const r = st.result;
    if (r) {
      console.log(r.accepted
        ? `result     accepted${r.order_id !== null ? ` (order ${r.order_id})` : ''}`
        : `result     refused: ${r.error ?? '?'}: ${r.message ?? ''}`.trimEnd());
    }
  }
}

function printQueued(q: ForceInclusion): void {
  console.log(`queued forced-inclusion entry ${q.entry_id} (${q.kind}) for ${q.user} (batch ${q.batch_id})`);
  console.log(`nonces     envelope ${q.nonce}  payload ${q.payload_nonce}`);
  console.log(`payload    ${q.payload_hash}`);
  console.log(`queued     ${q.queued_at}  deadline ${q.deadline}`);
}

export async function forceIncludeCommand(args: ParsedArgs): Promise<number> {
  return runCommand(args, FORCE_INCLUDE_USAGE, async () => {
    const sub = args.positional[1];
    const json = args.flags.has('json');
    if (sub === 'status') {
      const id = args.positional[2] ?? str(args, 'entry-id');
      if (id === undefined || !/^[1-9][0-9]*$/.test(id)) throw new UsageError('status needs an entry id (a positive integer)');
      const st = await new RingbookClient({ base_url: url(args) }).forceInclusion(id);
      if (json) console.log(JSON.stringify(st));
      else printStatus(st);
      return EXIT_OK;
    }
    if (sub === undefined) throw new UsageError('force-include needs a kind (order, cancel, amend, cancel-all, withdrawal, referral), payload or status');
    const nonce = nonceFlag(args);
    const wait = args.flags.has('wait');
    const timeout_s = int(args, 'timeout', 60, 1, 86_400 * 2);
    const client = new RingbookClient({ base_url: url(args), wallet: wallet(args) });
    let q: ForceInclusion;
    if (sub === 'payload') {
      const hex = args.positional[2];
      if (hex === undefined || !/^0x([0-9a-fA-F]{2})+$/.test(hex)) throw new UsageError('payload needs the 0x hex of a signed request body');
      q = await client.forceIncludePayload(hex, nonce !== undefined ? { nonce } : {});
    } else {
      const kind = KIND_ALIASES[sub];
      if (kind === undefined) throw new UsageError(`unknown kind ${JSON.stringify(sub)}: order, cancel, amend, cancel-all, withdrawal, referral, payload`);
      const request = forcedRequestOf(kind, args);
      const payload_nonce = str(args, 'payload-nonce') === undefined ? undefined : int(args, 'payload-nonce', 0, 1);
      q = await client.forceInclude(request, {
        ...(nonce !== undefined ? { nonce } : {}),
        ...(payload_nonce !== undefined ? { payload_nonce } : {}),
        ...(args.flags.has('no-kind') ? { kind_member: false } : {}),
      });
    }
    if (!wait) {
      if (json) console.log(JSON.stringify(q));
      else printQueued(q);
      return EXIT_OK;
    }
    if (!json) printQueued(q);
    const st = await client.waitForInclusion(q.entry_id, { interval_ms: 500, timeout_ms: timeout_s * 1000 });
    if (json) console.log(JSON.stringify({ queued: q, status: st }));
    else printStatus(st);
    const refusal = forcedResultError(st.result);
    if (refusal) {
      console.error(`ringbook: forced request refused: ${refusal.code}: ${refusal.message}`);
      return EXIT_ERROR;
    }
    return EXIT_OK;
  });
}
