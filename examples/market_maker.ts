// Example market-making bot for Ringbook, on the client SDK (src/client).
//
// It quotes a post-only bid and ask around a reference price and requotes when the reference
// moves (a slow random walk, or the last trade with `follow_trades`) or a quote was filled: each
// requote is ONE POST /orders/batch (cancel-all, bid, ask) sent as a `post` over its WebSocket,
// applied in one engine batch. It cancels all its orders on SIGINT/SIGTERM. It arms the exchange's
// dead-man switch (`dead_man_ms`, default 15 s, re-armed every third of it), so if the bot is
// killed or loses the exchange, its quotes are cancelled by the exchange itself.
//
// It trades through an AGENT KEY (docs/api.md "Agent keys"): the funded wallet (RINGBOOK_KEY)
// only approves a hot key for a day (POST /agents, signed by the wallet), and the bot quotes with
// that key. The hot key can place and cancel for the wallet, arm its dead-man switch, and nothing
// else: it can never withdraw, register a referral, approve other keys or force-include. Give it
// RINGBOOK_AGENT_KEY to reuse one; otherwise a fresh key is made and approved at each start.
//
// The implementation lives in src/cli/market_maker.ts so that the project's tsc build compiles
// it (tsconfig.json includes src, bench and test only). Run the compiled bot with:
//
//   make run                                       # the server, in another terminal
//   RB="node dist/src/cli/ringbook.js"
//   $RB keygen --json                              # the bot's key and address
//   $RB deposit --user <address> --asset ETH --amount 5 --data-dir data
//   $RB deposit --user <address> --asset USDC --amount 20000 --data-dir data
//   $RB keygen --json                              # the bot's agent key
//   $RB agent approve <agent address> --name mm --key <private_key>
//   node dist/src/cli/market_maker.js --key <agent private key> --for <address> --market ETH-USDC \
//        --price 2000 --quantity 0.1 --spread-bps 20 --interval 5
//   # (or: $RB market-maker ... with the same flags; Ctrl-C cancels its orders and exits)
//
// This file shows the programmatic use; to run it directly, compile it with the project, e.g.
//   npx tsc --ignoreConfig --outDir dist --rootDir . --module NodeNext --moduleResolution NodeNext \
//     --target ES2022 --types node --skipLibCheck examples/market_maker.ts
//   RINGBOOK_KEY=0x... node dist/examples/market_maker.js
import { randomBytes } from 'node:crypto';
import { Agent, parseDecimalUnits, RingbookClient, Wallet } from '../src/client/index.js';
import { startMarketMaker } from '../src/cli/market_maker.js';

const key = process.env.RINGBOOK_KEY;
if (!key) {
  console.error('set RINGBOOK_KEY to the private key of the funded wallet (it only approves the bot\'s agent key)');
  process.exit(64);
}
const url = process.env.RINGBOOK_URL ?? 'http://127.0.0.1:8080';
const user = new Wallet(key);
const agent = new Agent(process.env.RINGBOOK_AGENT_KEY ?? '0x' + randomBytes(32).toString('hex'), user.address);
// The wallet signs one approval; from here on only the hot key signs (for a day at most).
await new RingbookClient({ base_url: url, wallet: user }).approveAgent(agent.agent_address, 'example-mm', Date.now() + 24 * 3600 * 1000);

const mm = await startMarketMaker({
  url,
  wallet: agent,
  market_id: 'ETH-USDC',
  reference: parseDecimalUnits('2000', { allow_negative: false }),
  quantity: parseDecimalUnits('0.1', { allow_negative: false }),
  spread_bps: 20, // 0.2 % between bid and ask
  interval_ms: 6000, // a requote (one batch) counts 2 orders + 1 cancel: 10 a minute stay under 20/min
  walk_bps: 5,
});

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    void mm.stop();
  });
}
await mm.done;
console.log(`done: ${JSON.stringify(mm.stats)}`);
