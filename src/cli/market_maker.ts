// An example market-making bot on the SDK: quotes one bid and one ask around a reference price,
// amends them when the reference moves (a slow random walk, or the last trade with
// --follow-trades), re-places a quote that was filled, and cancels everything on shutdown.
//
// Run it as `ringbook market-maker ...` or `node dist/src/cli/market_maker.js ...` (same flags);
// examples/market_maker.ts is the documented entry that imports startMarketMaker from here.
// Amends count against the orders rate limit (default 20 per wallet per minute): the default
// interval of 5 s with a requote threshold keeps the bot under it.
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  formatUnits, NotFoundError, RateLimitedError, RingbookClient, RingbookError, Wallet,
  type Market, type OrderRecord, type Side,
} from '../client/index.js';
import {
  BOOLEAN_FLAGS, EXIT_OK, num, parseArgs, runCommand, sleep, str, UsageError, units, url, wallet, type ParsedArgs,
} from './common.js';

export interface MarketMakerOptions {
  url: string;
  wallet: Wallet;
  market_id: string;
  /** Starting reference price, units. */
  reference: number;
  /** Total spread around the reference, basis points (default 20). */
  spread_bps?: number;
  /** Quantity of each quote, units. */
  quantity: number;
  /** Period of the reference update, ms (default 5000). */
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
  readonly stats: { placed: number; amended: number; replaced: number; errors: number; cancelled: number };
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
  const interval_ms = o.interval_ms ?? 5000;
  const walk_bps = o.walk_bps ?? 5;
  const requote = (o.requote_ticks ?? 1) * tick;
  let reference = roundTo(o.reference, tick);
  const stats = { placed: 0, amended: 0, replaced: 0, errors: 0, cancelled: 0 };
  const quotes: Record<Side, OrderRecord | null> = { bid: null, ask: null };
  let quoted_ref = 0;
  let stopping = false;
  let wake: (() => void) | null = null;

  await client.syncNonce();
  const stale = await client.cancelAll(o.market_id);
  if (stale.cancelled.length > 0) log(`cancelled ${stale.cancelled.length} stale orders`);
  const dead_man_ms = o.dead_man_ms ?? 15_000;
  const keep_alive = dead_man_ms > 0
    ? await client.keepDeadManAlive(dead_man_ms, { onError: (e) => log(`dead-man re-arm failed: ${e instanceof Error ? e.message : String(e)}`) })
    : null;
  if (keep_alive) log(`dead-man switch armed: ${dead_man_ms} ms, deadline ${keep_alive.last?.deadline ?? '?'}`);

  const priceFor = (side: Side): number => {
    const half = Math.max(tick, Math.round((reference * spread_bps) / 20_000 / tick) * tick);
    return side === 'bid' ? Math.max(tick, reference - half) : reference + half;
  };

  async function place(side: Side): Promise<void> {
    const price = priceFor(side);
    const r = await client.placeOrder({ market_id: o.market_id, side, price, quantity, time_in_force: 'post_only' });
    stats.placed++;
    quotes[side] = r.status === 'open' || r.status === 'partially_filled' ? r : null;
    log(`placed ${side} ${formatUnits(quantity)} @ ${formatUnits(price)} (order ${r.order_id}, ${r.status})`);
  }

  async function requoteSide(side: Side): Promise<void> {
    const q = quotes[side];
    const price = priceFor(side);
    if (q === null) return place(side);
    if (q.price === price) return;
    try {
      const r = await client.amend({ order_id: q.order_id, price, quantity });
      stats.amended++;
      quotes[side] = r.status === 'open' || r.status === 'partially_filled' ? r : null;
      log(`amended ${side} order ${q.order_id} -> ${formatUnits(price)} (${r.status}${r.fills.length ? `, ${r.fills.length} fills` : ''})`);
      if (quotes[side] === null) await place(side);
    } catch (e) {
      if (!(e instanceof NotFoundError)) throw e;
      // Filled (or cancelled) since: quote again.
      stats.replaced++;
      log(`${side} order ${q.order_id} is gone (filled?): placing a new one`);
      quotes[side] = null;
      await place(side);
    }
  }

  async function step(): Promise<void> {
    if (o.follow_trades) {
      const t = await client.trades(o.market_id, { limit: 1 });
      if (t.length > 0) reference = roundTo(Number(t[0].price), tick);
    } else {
      const move = reference * (walk_bps / 10_000) * (Math.random() * 2 - 1);
      reference = roundTo(reference + move, tick);
    }
    // Detect fills of resting quotes (cheap: one GET of the open orders).
    const open = await client.orders({ market_id: o.market_id, status: 'open' }); // includes partially_filled
    for (const side of ['bid', 'ask'] as const) {
      const q = quotes[side];
      if (q && !open.some((x) => x.order_id === q.order_id)) {
        stats.replaced++;
        log(`${side} order ${q.order_id} filled: quoting again`);
        quotes[side] = null;
      }
    }
    const moved = Math.abs(reference - quoted_ref) >= requote;
    if (moved || quotes.bid === null || quotes.ask === null) {
      if (moved) log(`reference ${formatUnits(reference)}`);
      for (const side of ['bid', 'ask'] as const) if (moved || quotes[side] === null) await requoteSide(side);
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
      // Disarmed only after a clean cancel below would be pointless: stop re-arming now, and
      // let the switch fire if the cancel-all fails every attempt.
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
  log(`market maker ${o.wallet.address} on ${o.market_id}: reference ${formatUnits(reference)}, spread ${spread_bps} bps, size ${formatUnits(quantity)}`);
  return { stop, done, stats };
}

export const MARKET_MAKER_USAGE = `usage: ringbook market-maker --market <id> --price <decimal> --quantity <decimal> [options]
       node dist/src/cli/market_maker.js (same options)

Example bot: quotes a post-only bid and ask around a reference price, amends them when the
reference moves, re-quotes a side that was filled, cancels all its orders on SIGINT/SIGTERM.
The account needs both assets deposited (ringbook deposit).

options:
  --market <id>              default ETH-USDC
  --price <decimal>          starting reference price (required)
  --quantity <decimal>       size of each quote (required)
  --spread-bps <n>           total spread around the reference (default 20)
  --interval <s>             reference update period (default 5; amends count against the
                             orders rate limit, 20 per wallet per minute by default)
  --walk-bps <n>             random-walk step per interval (default 5)
  --follow-trades            use the last trade as the reference instead of a random walk
  --requote-ticks <n>        minimum reference move before amending (default 1)
  --duration <s>             stop by itself after this long (default: run until a signal)
  --dead-man-ms <n>          dead-man switch, re-armed every third of it (default 15000; 0 off)
  --key <private_key>        signing key (default: RINGBOOK_KEY)
  --url <base_url>           server (default RINGBOOK_URL or http://127.0.0.1:8080)
  --help                     this text

exit codes: 0 ok (after a clean shutdown), 1 error, 64 usage error`;

export async function marketMakerCommand(args: ParsedArgs): Promise<number> {
  return runCommand(args, MARKET_MAKER_USAGE, async () => {
    const duration = num(args, 'duration', 0, 0, 1e9);
    const mm = await startMarketMaker({
      url: url(args),
      wallet: wallet(args),
      market_id: str(args, 'market') ?? 'ETH-USDC',
      reference: units(args, 'price'),
      quantity: units(args, 'quantity'),
      spread_bps: num(args, 'spread-bps', 20, 0, 10_000),
      interval_ms: num(args, 'interval', 5, 0.05, 3600) * 1000,
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
