/**
 * Fills tree benchmark: leaf hashing throughput and full tree builds (hash + sort + tree) for
 * 1,000 and 10,000 fills. Run: `npx tsc -p tsconfig.json && node dist/bench/fills_tree.js`.
 * The last line of output is one JSON object:
 *   {"bench":"fills_tree","leaves_per_s":..,"build_ms_1k":..,"build_ms_10k":..}
 */

import { Bench, type Task } from 'tinybench';
import { type FillLeaf, FillsTree, fillLeafHash, verifyFillProof } from '../src/da/fills_tree.js';
import { Rng } from '../src/util/prng.js';

/** Deterministic pseudo-random fills (the project's seeded PRNG), shaped like real ones. */
function makeFills(n: number, seed = 0x9e3779b9): FillLeaf[] {
  const rng = new Rng(seed);
  const next = (): number => rng.u32();
  const addr = (): string => {
    let h = '0x';
    for (let i = 0; i < 5; i++) h += next().toString(16).padStart(8, '0');
    return h;
  };
  const accounts = Array.from({ length: 64 }, addr);
  const markets = ['ETH-USDC', 'BTC-USDC', 'SOL-USDC', 'ARB-ETH'];
  const out: FillLeaf[] = [];
  for (let i = 0; i < n; i++) {
    const quantity = 1 + (next() % 1_000_000);
    const fee = Math.floor(quantity / 2);
    out.push({
      batch_id: 1_000_000 + Math.floor(i / 500),
      fill_id: 50_000_000 + i,
      taker_order_id: 2 * i + 1_000_000_000,
      maker_order_id: (next() % 1_000_000) + 900_000_000,
      taker: accounts[next() % accounts.length]!,
      maker: accounts[next() % accounts.length]!,
      market_id: markets[next() % markets.length]!,
      taker_side: next() % 2 === 0 ? 'bid' : 'ask',
      price: 1_000_000_000 + (next() % 100_000_000) * 100,
      quantity,
      taker_fee: fee,
      maker_fee: next() % 3 === 0 ? -Math.floor(fee / 5) : Math.floor(fee / 10),
    });
  }
  return out;
}

function meanMs(task: Task | undefined): number {
  const r = task?.result;
  if (r === undefined || !('latency' in r)) throw new Error(`task ${task?.name ?? '?'} has no result`);
  return r.latency.mean;
}

const round = (x: number, digits: number): number => Number(x.toFixed(digits));

async function main(): Promise<void> {
  const fills_1k = makeFills(1_000, 1);
  const fills_10k = makeFills(10_000, 2);

  // Sanity: every proof of a built tree verifies.
  const check = FillsTree.build(fills_1k);
  for (let i = 0; i < check.size(); i++) {
    if (!verifyFillProof(check.root(), check.leafHash(i), check.proof(i))) throw new Error(`proof ${i} fails`);
  }

  const tree_10k = FillsTree.build(fills_10k);
  const root_10k = tree_10k.root();
  let sink = 0;
  const bench = new Bench({ name: 'fills_tree', time: 1_500, iterations: 10, warmupIterations: 3 });
  bench
    .add('hash 1,000 leaves (abi.encode + 2x keccak)', () => {
      for (const f of fills_1k) sink ^= fillLeafHash(f)[0]!;
    })
    .add('build 1,000 fills', () => {
      sink ^= FillsTree.build(fills_1k).size();
    })
    .add('build 10,000 fills', () => {
      sink ^= FillsTree.build(fills_10k).size();
    })
    .add('proof + verify, 1,000 leaves of the 10k tree', () => {
      for (let i = 0; i < 1_000; i++) {
        if (!verifyFillProof(root_10k, tree_10k.leafHash(i), tree_10k.proof(i))) throw new Error('bad proof');
      }
    });
  await bench.run();

  const rows = bench.tasks.map((t) => ({ task: t.name, mean_ms: round(meanMs(t), 3) }));
  console.table(rows);

  const hash_ms = meanMs(bench.tasks[0]);
  const leaves_per_s = Math.round((1_000 / hash_ms) * 1_000);
  const build_ms_1k = round(meanMs(bench.tasks[1]), 3);
  const build_ms_10k = round(meanMs(bench.tasks[2]), 3);
  console.log(`leaf hashing: ${leaves_per_s.toLocaleString('en-US')} leaves/s; 1k build ${build_ms_1k} ms; 10k build ${build_ms_10k} ms (sink ${sink & 1})`);
  console.log(JSON.stringify({ bench: 'fills_tree', leaves_per_s, build_ms_1k, build_ms_10k }));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
