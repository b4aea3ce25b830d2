// Micro benchmark for src/money: ns per call of mulDivFloor / notional on the direct path
// (price*quantity <= 2^53), the limb path with the engine's divisor 1e6 (product above 2^53),
// and, for mulDivFloor, the limb path with a large divisor; the BigInt reference and an inexact
// float one-liner are yardsticks. Plain timing loop with no dependencies, so it runs from
// `make bench BENCHES=money` (dist/bench/money.js) as is.
//
// Last line of output is one JSON object: {"bench":"money", ...}.

import { mulDivFloor, notionalCeil, notionalFloor } from '../src/money/index.js';
import { Rng } from '../src/util/prng.js';

const SAMPLES = 4_096; // power of two so the index wraps with a mask
const MASK = SAMPLES - 1;
const ITERATIONS = 2_000_000;
const ROUNDS = 5; // best of N, to shrug off GC and JIT noise

// Deterministic inputs (the project's seeded PRNG) so runs are comparable.
const rng = new Rng(0x2545f491);
const randomInt = (min: number, max: number): number => rng.int(min, max);

interface Inputs {
  a: Float64Array;
  b: Float64Array;
  d: Float64Array;
}

function makeInputs(pick: () => [number, number, number]): Inputs {
  const inputs: Inputs = { a: new Float64Array(SAMPLES), b: new Float64Array(SAMPLES), d: new Float64Array(SAMPLES) };
  for (let i = 0; i < SAMPLES; i++) {
    const [a, b, d] = pick();
    inputs.a[i] = a;
    inputs.b[i] = b;
    inputs.d[i] = d;
  }
  return inputs;
}

// ETH-USDC style fills: price 100..10,000 USDC on a 0.01 tick, quantity 0.0001..100 ETH.
// The largest product is 1e10 * 1e8 = 1e18 units^2, so keep to ones that stay below 2^53.
const direct = makeInputs(() => {
  for (;;) {
    const price = randomInt(10_000, 1_000_000) * 10_000;
    const quantity = randomInt(1, 10_000) * 100;
    if (price * quantity <= Number.MAX_SAFE_INTEGER) return [price, quantity, 1_000_000];
  }
});
// BTC-USDC style large fills: 20,000..100,000 USDC x 1..1,000 BTC, product 2e16..1e20.
const limb = makeInputs(() => {
  const price = randomInt(200_000, 1_000_000) * 100_000;
  const quantity = randomInt(100_000, 100_000_000) * 10;
  return [price, quantity, 1_000_000];
});

// One hand-written loop per function: a shared loop calling through a function parameter would
// turn the call site megamorphic and measure V8's dispatch instead of the arithmetic.
// mulDivFloor with a large divisor (2^30..2^50, product above 2^53): the 24-bit-limb long
// division. The engine's own divisors (1e6, 1e4) take the cheaper small-divisor split above.
const limbLargeDivisor = makeInputs(() => {
  for (;;) {
    const a = randomInt(2 ** 20, 2 ** 52);
    const b = randomInt(2 ** 20, 2 ** 52);
    const d = randomInt(2 ** 30, 2 ** 50);
    if (a * b > Number.MAX_SAFE_INTEGER && (a * b) / d < 2 ** 52) return [a, b, d];
  }
});

type Loop = (inputs: Inputs, iterations: number) => number;

const loops: Record<string, Loop> = {
  mulDivFloor: ({ a, b, d }, iterations) => {
    let sink = 0;
    for (let i = 0; i < iterations; i++) sink += mulDivFloor(a[i & MASK], b[i & MASK], d[i & MASK]);
    return sink;
  },
  notionalFloor: ({ a, b }, iterations) => {
    let sink = 0;
    for (let i = 0; i < iterations; i++) sink += notionalFloor(a[i & MASK], b[i & MASK]);
    return sink;
  },
  notionalCeil: ({ a, b }, iterations) => {
    let sink = 0;
    for (let i = 0; i < iterations; i++) sink += notionalCeil(a[i & MASK], b[i & MASK]);
    return sink;
  },
  // Yardstick only: fast but wrong on the limb path (loses the low bits of the product).
  float_inexact: ({ a, b, d }, iterations) => {
    let sink = 0;
    for (let i = 0; i < iterations; i++) sink += Math.floor((a[i & MASK] * b[i & MASK]) / d[i & MASK]);
    return sink;
  },
  // Yardstick only: what the tests use as the exact reference.
  bigint_reference: ({ a, b, d }, iterations) => {
    let sink = 0n;
    for (let i = 0; i < iterations; i++) sink += (BigInt(a[i & MASK]) * BigInt(b[i & MASK])) / BigInt(d[i & MASK]);
    return Number(sink & 1n);
  },
};

// Timed with process CPU time (user + system) rather than wall time: the benchmark often shares a
// small CI machine with other jobs, and CPU time is not inflated by waiting for a core. Best of
// ROUNDS, so the round that pays for JIT compilation and GC is discarded.
function measure(loop: Loop, inputs: Inputs, iterations: number): number {
  let best = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.cpuUsage();
    const sink = loop(inputs, iterations);
    const used = process.cpuUsage(start);
    // Keep the result observable so the loop is not optimised away.
    if (sink === 0.5) console.log('unreachable');
    best = Math.min(best, ((used.user + used.system) * 1_000) / iterations);
  }
  return best;
}

// Warm every loop on both paths first, as the matcher sees both: otherwise the first function
// measured gets code specialised for the direct path only and deoptimises on the limb inputs.
for (const loop of Object.values(loops)) {
  for (let i = 0; i < 3; i++) {
    loop(direct, 20_000);
    loop(limb, 20_000);
    loop(limbLargeDivisor, 20_000);
  }
}

const results: Record<string, number> = {};
for (const [name, loop] of Object.entries(loops)) {
  const paths: [string, Inputs][] = [
    ['direct', direct],
    ['limb', limb],
  ];
  // Notional loops always divide by 1e6, so the large-divisor inputs only apply to the rest.
  if (!name.startsWith('notional')) paths.push(['limb_large_d', limbLargeDivisor]);
  for (const [path, inputs] of paths) {
    // BigInt allocates per call and is ~50x slower: fewer iterations give the same precision.
    const ns = measure(loop, inputs, name === 'bigint_reference' ? ITERATIONS / 10 : ITERATIONS);
    results[`${name}_${path}_ns`] = Math.round(ns * 100) / 100;
    console.log(`${name.padEnd(18)} ${path.padEnd(13)} ${ns.toFixed(2).padStart(8)} ns/op`);
  }
}

console.log(
  JSON.stringify({
    bench: 'money',
    node: process.version,
    clock: 'process_cpu',
    iterations: ITERATIONS,
    rounds: ROUNDS,
    ...results,
  }),
);
