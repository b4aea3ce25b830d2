// One chain reader in a cluster (docs/settlement.md, "Roots in a cluster"): of two gateways with
// settlement.rpc_url, only the holder of the chain reader lease (src/cluster/lease.ts
// ChainReaderLease) reads the contract's events, so a deposit is submitted once (before, each
// gateway submitted it and the engine refused the repeat, logged as an error). When the reader is
// killed, the other takes the lease over and credits the next deposit, crediting nothing twice.
// Real parts: a 3-node JetStream cluster (nats-server), the leader matcher and both gateways as
// real processes, the in-process EVM behind its JSON-RPC shim and the Settlement contract.
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { adminState, balances, bytesToHex, Wallet, type StartedServer } from '../server/harness.js';
import { waitFor } from '../cluster/cluster_helpers.js';
import { OPERATOR_KEY } from './dev_chain.js';
import { startSettledCluster, stopSettledClusters } from './settled_cluster.js';
import { Validator } from '../openapi/validate.js';

/** docs/openapi.yaml's AdminState: both gateways' states, with the new link fields, conform. */
const spec = parse(fs.readFileSync(new URL('../../docs/openapi.yaml', import.meta.url), 'utf8')) as Record<string, unknown>;
const validator = new Validator(spec);

const POLL_MS = 50;
const ETH = 10n ** 18n;
/** 1 ETH in the engine's units (6 decimals). */
const ONE_ETH_UNITS = 1_000_000;

afterAll(stopSettledClusters);

async function link(g: StartedServer): Promise<{ reading: boolean; deposits_credited: number; reader_takeovers: number; last_error: string | null }> {
  return (await adminState(g)).settlement.link;
}

describe('one chain reader in a cluster', () => {
  it('only the lease holder credits a deposit; after its death the other gateway reads and credits the next', async () => {
    const alice = Wallet.random();
    const { dev, settlement, c } = await startSettledCluster([alice.address], POLL_MS);
    const { contract } = dev;
    const g1 = await c.startGateway('g1', settlement, { RINGBOOK_OPERATOR_KEY: OPERATOR_KEY });
    const g2 = await c.startGateway('g2', settlement, { RINGBOOK_OPERATOR_KEY: OPERATOR_KEY });
    // Exactly one of them reads (the first to start took the lease; the other keeps asking).
    const [reader, other] = await waitFor('one reader', 10_000, async () => {
      const l1 = await link(g1);
      const l2 = await link(g2);
      if (l1.reading === l2.reading) return undefined;
      return l1.reading ? [g1, g2] : [g2, g1];
    }, 50);
    const key = '0x' + bytesToHex(alice.priv);

    await contract.send(key, 'depositEth', [], ETH);
    for (const g of [g1, g2]) {
      await waitFor('the deposit seen by both gateways', 20_000, async () => ((await balances(g, alice.address)).ETH?.available === ONE_ETH_UNITS ? true : undefined), 50);
    }
    // A few more rounds of both links: the non-reader still submits nothing.
    await new Promise((r) => setTimeout(r, 10 * POLL_MS));
    expect((await balances(other, alice.address)).ETH?.available).toBe(ONE_ETH_UNITS);
    expect(await link(reader)).toMatchObject({ reading: true, deposits_credited: 1, last_error: null });
    expect(await link(other)).toMatchObject({ reading: false, deposits_credited: 0, reader_takeovers: 0, last_error: null });
    for (const g of [g1, g2]) expect(g.output().stderr + g.output().stdout).not.toMatch(/chain deposit \d+ of .* refused/);
    for (const g of [g1, g2]) expect(validator.validate(await adminState(g), { $ref: '#/components/schemas/AdminState' })).toEqual([]);

    // The reader dies; the other takes the lease after its TTL and credits the next deposit. It
    // starts reading at settlement.start_block: the first deposit is skipped by the engine's
    // high-water mark, not credited again.
    await reader.stop('SIGKILL');
    c.gateways.splice(c.gateways.indexOf(reader), 1);
    await waitFor('the other gateway to read', 10_000, async () => ((await link(other)).reading ? true : undefined), 50);
    await contract.send(key, 'depositEth', [], 2n * ETH);
    await waitFor('the second deposit credited', 20_000, async () => ((await balances(other, alice.address)).ETH?.available === 3 * ONE_ETH_UNITS ? true : undefined), 50);
    await new Promise((r) => setTimeout(r, 10 * POLL_MS));
    expect((await balances(other, alice.address)).ETH?.available).toBe(3 * ONE_ETH_UNITS);
    expect(await link(other)).toMatchObject({ reading: true, deposits_credited: 1, reader_takeovers: 1, last_error: null });
    expect(other.output().stderr + other.output().stdout).not.toMatch(/chain deposit \d+ of .* refused/);
  }, 120_000);
});
