// An example market-making bot on the SDK: quotes one post-only bid and one ask around a reference
// price and requotes when the reference moves (a slow random walk, or the last trade with
// --follow-trades) or a quote was filled, and cancels everything on shutdown.
//
// Each requote is ONE `POST /orders/batch` sent over the WebSocket it already holds (`post`):
// cancel-all of the market, then the new bid and ask, applied contiguously in one engine batch, so
// the book never shows the bot without quotes in between and a cycle costs one message. Its quotes
// use stp expire_maker (the default): if the reference jumps so that a new quote would cross the
// bot's own old one, the old one is cancelled instead of trading with itself. Fills are seen on the
// `orders:<address>` channel of the same connection.
//
// It may run on an agent key (`--for <user>`, the SDK's Agent; docs/api.md "Agent keys"): a hot
// key that can quote and cancel for the user but never withdraw. An agent cannot authenticate a
// WebSocket as its user, so it does not subscribe `orders:<address>`; it sees its quotes go by
// reading the user's open orders (a public GET) each interval instead.
//
// Run it as `ringbook market-maker ...` or `node dist/src/cli/market_maker.js ...` (same flags);
// examples/market_maker.ts is the documented entry that imports startMarketMaker from here.
// A requote costs 2 orders and 1 cancel against the rate limits (default 20 orders per wallet per
// minute): the default interval of 6 s (at most 10 requotes a minute) keeps the bot under it.
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  Agent, formatUnits, RateLimitedError, RingbookClient, RingbookError, RingbookSocket, Wallet,
  type BatchItemResult, type BatchRequest, type Market, type Side,
} from '../client/index.js';
import {
  BOOLEAN_FLAGS, EXIT_OK, KEY_FLAG_USAGE, num, parseArgs, type ParsedArgs, runCommand, sleep, str,
  tradingSigner, units, url, URL_FLAG_USAGE, UsageError,
} from './common.js';

export interface MarketMakerOptions {
  url: string;
  /** The user's wallet, or an agent key approved by the user (it trades for `wallet.address`). */
  wallet: Wallet | Agent;
  market_id: string;
  /** Starting reference price, units. */
  reference: number;
  /** Total spread around the reference, basis points (default 20). */
  spread_bps?: number;
  /** Quantity of each quote, units. */
  quantity: number;
  /** Period of the reference update, ms (default 6000). */
  interval_ms?: number;
  /** Random-walk step per interval, basis points of the reference (default 5). */
  walk_bps?: number;
  /** Follow the last trade instead of a random walk. */
  follow_trades?: boolean;
  /** Minimum reference move before amending, in ticks (default 1). */
  requote_ticks?: number;
  /**
   * Dead-man switch (ms, default 15,000; 0 = none): armed at start and re-armed every third of
   * it, so if the bot dies or loses the exchange its quotes are cancelled by the exchange.
   */
  dead_man_ms?: number;
  log?: (line: string) => void;
}

export interface MarketMaker {
  /** Stops quoting, cancels every open order of the bot's market; resolves when done. */
  stop(): Promise<void>;
  /** Resolves after stop() has finished. */
  readonly done: Promise<void>;
  readonly stats: { requotes: number; placed: number; filled: number; errors: number; cancelled: number };
}

function roundTo(x: number, step: number): number {
  return Math.max(step, Math.round(x / step) * step);
}

export async function startMarketMaker(o: MarketMakerOptions): Promise<MarketMaker> {
  const log = o.log ?? ((s: string) => console.log(`${new Date().toISOString()} ${s}`));
  const client = new RingbookClient({ base_url: o.url, wallet: o.wallet });
  const markets = await client.markets();
  const market: Market | undefined = markets.find((m) => m.id === o.market_id);
  if (!market) throw new UsageError(`unknown market ${o.market_id}`);
  const tick = market.tick_size;
  const quantity = roundTo(o.quantity, market.lot_size);
  const spread_bps = o.spread_bps ?? 20;
  const interval_ms = o.interval_ms ?? 6000;
  const walk_bps = o.walk_bps ?? 5;
  const requote = (o.requote_ticks ?? 1) * tick;
  let reference = roundTo(o.reference, tick);
  const stats = { requotes: 0, placed: 0, filled: 0, errors: 0, cancelled: 0 };
  /** The resting quotes' order ids (null: none resting on that side). */
  const quotes: Record<Side, number | null> = { bid: null, ask: null };
  let quoted_ref = 0;
  let stopping = false;
  let wake: (() => void) | null = null;

  await client.syncNonce();
  const dead_man_ms = o.dead_man_ms ?? 15_000;
  const keep_alive = dead_man_ms > 0
    ? await client.keepDeadManAlive(dead_man_ms, { onError: (e) => log(`dead-man re-arm failed: ${e instanceof Error ? e.message : String(e)}`) })
    : null;
  if (keep_alive) log(`dead-man switch armed: ${dead_man_ms} ms, deadline ${keep_alive.last?.deadline ?? '?'}`);
  // One connection for order entry (post) and, with the user's own wallet, the bot's order updates.
  const agent_mode = o.wallet instanceof Agent;
  const sock = agent_mode
    ? new RingbookSocket({ url: o.url })
    : new RingbookSocket({ url: o.url, wallet: o.wallet, channels: [`orders:${o.wallet.address}`] });
  sock.onOrder((u) => {
    for (const side of ['bid', 'ask'] as const) {
      if (quotes[side] !== null && u.order_id === String(quotes[side]) && (u.status === 'filled' || u.status === 'cancelled')) {
        if (u.status === 'filled') stats.filled++;
        log(`${side} order ${u.order_id} ${u.status} (${u.reason})`);
        quotes[side] = null;
      }
    }
  });
  await sock.connect();

  const priceFor = (side: Side): number => {
    const half = Math.max(tick, Math.round((reference * spread_bps) / 20_000 / tick) * tick);
    return side === 'bid' ? Math.max(tick, reference - half) : reference + half;
  };

  /** One batch over the WebSocket: cancel-all of the market, then the new bid and ask. */
  async function requoteBoth(): Promise<void> {
    const bid = priceFor('bid');
    const ask = priceFor('ask');
    const items: BatchRequest[] = [
      { kind: 'cancel_all', market_id: o.market_id },
      { kind: 'order', market_id: o.market_id, side: 'bid', price: bid, quantity, time_in_force: 'post_only' },
      { kind: 'order', market_id: o.market_id, side: 'ask', price: ask, quantity, time_in_force: 'post_only' },
    ];
    const r = await sock.post('/orders/batch', client.batchRequestBody(items));
    if (r.status === 429) throw new RateLimitedError({ code: 'RATE_LIMITED', message: String(r.body.error), status: 429, request_id: null, retry_after_s: interval_ms / 1000 });
    if (r.status !== 200) throw new RingbookError({ code: String(r.body.error), message: String(r.body.message), status: r.status, request_id: r.body.request_id ?? null });
    const results = r.body.data as BatchItemResult[];
    stats.requotes++;
    const cancelled = results[0].ok ? (results[0].data as { cancelled: unknown[] }).cancelled.length : 0;
    stats.cancelled += cancelled;
    const parts: string[] = [];
    for (const [k, side, price] of [[1, 'bid', bid], [2, 'ask', ask]] as const) {
      const x = results[k];
      if (x.ok) {
        const d = x.data as { order_id: number; status: string };
        stats.placed++;
        quotes[side] = d.status === 'open' || d.status === 'partially_filled' ? d.order_id : null;
        parts.push(`${side} ${formatUnits(quantity)} @ ${formatUnits(price)} (order ${d.order_id}, ${d.status})`);
      } else {
        quotes[side] = null;
        parts.push(`${side} refused: ${x.error} ${x.message}`);
      }
    }
    log(`requoted in one batch: cancelled ${cancelled}, ${parts.join(', ')}`);
  }

  /** Agent mode: a quote no longer among the user's open orders was filled or cancelled. */
  async function pollQuotes(): Promise<void> {
    const open = new Set((await client.orders({ status: 'open', market_id: o.market_id, limit: 100 })).map((x) => String(x.order_id)));
    for (const side of ['bid', 'ask'] as const) {
      if (quotes[side] !== null && !open.has(String(quotes[side]))) {
        log(`${side} order ${quotes[side]} left the book`);
        quotes[side] = null;
      }
    }
  }

  async function step(): Promise<void> {
    if (agent_mode) await pollQuotes();
    if (o.follow_trades) {
      const t = await client.trades(o.market_id, { limit: 1 });
      if (t.length > 0) reference = roundTo(Number(t[0].price), tick);
    } else {
      const move = reference * (walk_bps / 10_000) * (Math.random() * 2 - 1);
      reference = roundTo(reference + move, tick);
    }
    const moved = Math.abs(reference - quoted_ref) >= requote;
    if (moved || quotes.bid === null || quotes.ask === null) {
      if (moved) log(`reference ${formatUnits(reference)}`);
      await requoteBoth();
      quoted_ref = reference;
    }
  }

  const loop = (async () => {
    while (!stopping) {
      try {
        await step();
      } catch (e) {
        stats.errors++;
        if (e instanceof RateLimitedError) {
          log(`rate limited: waiting ${e.retry_after_s} s`);
          await sleepUnlessStopped(e.retry_after_s * 1000);
          continue;
        }
        log(`error: ${e instanceof RingbookError ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e)}`);
      }
      await sleepUnlessStopped(interval_ms);
    }
  })();

  function sleepUnlessStopped(ms: number): Promise<void> {
    if (stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        wake = null;
        resolve();
      }, ms);
      wake = () => {
        clearTimeout(t);
        wake = null;
        resolve();
      };
    });
  }

  let stopped: Promise<void> | null = null;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => {
    resolveDone = r;
  });
  const stop = (): Promise<void> => {
    if (stopped) return stopped;
    stopping = true;
    if (wake) (wake as () => void)();
    stopped = (async () => {
      await loop;
      sock.close();
      // Stop re-arming now, and let the switch fire if the cancel-all below fails every attempt.
      if (keep_alive) await keep_alive.stop().catch(() => undefined);
      for (let attempt = 0; attempt < 5; attempt++) {
        try {
          const r = await client.cancelAll(o.market_id);
          stats.cancelled += r.cancelled.length;
          log(`shutdown: cancelled ${r.cancelled.length} orders`);
          break;
        } catch (e) {
          log(`shutdown: cancel-all failed (${e instanceof Error ? e.message : String(e)}), retrying`);
          await sleep(e instanceof RateLimitedError ? e.retry_after_s * 1000 : 200);
        }
      }
      resolveDone();
    })();
    return stopped;
  };
  log(`market maker ${o.wallet.address}${o.wallet instanceof Agent ? ` (agent key ${o.wallet.agent_address})` : ''} on ${o.market_id}: reference ${formatUnits(reference)}, spread ${spread_bps} bps, size ${formatUnits(quantity)}`);
  return { stop, done, stats };
}

export const MARKET_MAKER_USAGE = `usage: ringbook market-maker --market <id> --price <decimal> --quantity <decimal> [options]
       node dist/src/cli/market_maker.js (same options)

Example bot: quotes a post-only bid and ask around a reference price and requotes when the
reference moves or a quote was filled, with one batch (cancel-all, bid, ask) per requote sent over
its WebSocket; cancels all its orders on SIGINT/SIGTERM.
The account needs both assets deposited (ringbook deposit).

options:
  --market <id>              default ETH-USDC
  --price <decimal>          starting reference price (required)
  --quantity <decimal>       size of each quote (required)
  --spread-bps <n>           total spread around the reference (default 20)
  --interval <s>             reference update period (default 6; a requote counts 2 orders and
                             1 cancel against the rate limits, 20 per wallet per minute by default)
  --walk-bps <n>             random-walk step per interval (default 5)
  --follow-trades            use the last trade as the reference instead of a random walk
  --requote-ticks <n>        minimum reference move before requoting (default 1)
  --dead-man-ms <n>          dead-man switch, re-armed every third of it (default 15000; 0 off)
  --duration <s>             stop by itself after this long (default: run until a signal)
${KEY_FLAG_USAGE}
  --for <user address>       --key is an agent key of this user (ringbook agent approve): the bot
                             quotes for the user and can never withdraw its funds
${URL_FLAG_USAGE}
  --help                     this text

exit codes: 0 ok (after a clean shutdown), 1 error, 64 usage error`;

export async function marketMakerCommand(args: ParsedArgs): Promise<number> {
  return runCommand(args, MARKET_MAKER_USAGE, async () => {
    const duration = num(args, 'duration', 0, 0, 1e9);
    const mm = await startMarketMaker({
      url: url(args),
      wallet: tradingSigner(args),
      market_id: str(args, 'market') ?? 'ETH-USDC',
      reference: units(args, 'price'),
      quantity: units(args, 'quantity'),
      spread_bps: num(args, 'spread-bps', 20, 0, 10_000),
      interval_ms: num(args, 'interval', 6, 0.05, 3600) * 1000,
      walk_bps: num(args, 'walk-bps', 5, 0, 10_000),
      follow_trades: args.flags.has('follow-trades'),
      requote_ticks: num(args, 'requote-ticks', 1, 0, 1e9),
      dead_man_ms: num(args, 'dead-man-ms', 15_000, 0, 86_400_000),
    });
    const onSignal = (sig: NodeJS.Signals): void => {
      console.log(`${new Date().toISOString()} ${sig}: shutting down`);
      void mm.stop();
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    const timer = duration > 0 ? setTimeout(() => void mm.stop(), duration * 1000) : null;
    await mm.done;
    if (timer) clearTimeout(timer);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    return EXIT_OK;
  });
}

// Direct entry: `node dist/src/cli/market_maker.js --price 2000 --quantity 0.1 ...`.
function isMain(): boolean {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  marketMakerCommand(parseArgs(process.argv.slice(2), BOOLEAN_FLAGS)).then((code) => {
    process.exitCode = code;
  }, (e: unknown) => {
    console.error(`market_maker: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 1;
  });
}
