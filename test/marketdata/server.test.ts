// Real server: crossing orders make LIVE 1m candles and leaderboard entries; both are rebuilt
// from the journal after a restart with the same data dir; parameter errors name the parameter.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { api, deposit, startServer, Wallet, type StartedServer } from '../server/harness.js';
import { fail, ok } from '../server/checks.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-md-'));
const servers: StartedServer[] = [];

afterAll(async () => {
  // Every server is stopped and the dir removed before the check, so one unclean exit leaves nothing behind.
  const codes: (number | null)[] = [];
  for (const s of servers) codes.push((await s.stop()).code);
  fs.rmSync(dir, { recursive: true, force: true });
  expect(codes).toEqual(servers.map(() => 0));
});

async function start(): Promise<StartedServer> {
  const s = await startServer({ env: { RINGBOOK_DATA_DIR: dir } });
  servers.push(s);
  return s;
}

describe('market data on the real server', () => {
  it('candles and leaderboard from crossing orders survive a restart', async () => {
    let s = await start();
    let a = api(s.url);
    const maker = Wallet.random();
    const taker = Wallet.random();
    ok(await deposit(s, maker.address, 'ETH', '1'));
    ok(await deposit(s, taker.address, 'USDC', '10000'));

    expect(ok(await a.get('/ohlcv/ETH-USDC?interval=1m'))).toEqual([]);
    expect(ok(await a.get('/leaderboard'))).toEqual([]);

    // Trade 1: 0.001 ETH at 2000 (full fill, book empty again).
    ok(await a.post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'ask', price: 2_000_000_000, quantity: 1000 })));
    const t1 = ok(await a.post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_001_000_000, quantity: 1000 })));
    // Trade 2: 0.0002 ETH at 2010 (the ask rests with 0.0003 left: the book stays one-sided).
    ok(await a.post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'ask', price: 2_010_000_000, quantity: 500 })));
    const t2 = ok(await a.post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_010_000_000, quantity: 200 })));
    expect(t1.fills.length + t2.fills.length).toBe(2);
    const taker_fees = [...t1.fills, ...t2.fills].reduce((x: number, f: any) => x + f.fee, 0);
    const maker_fills = ok(await a.get(`/account/${maker.address}/fills`));
    expect(maker_fills.length).toBe(2);
    const maker_fees = maker_fills.reduce((x: number, f: any) => x + f.fee, 0);

    const candles = ok(await a.get('/ohlcv/ETH-USDC?interval=1m'));
    expect(candles.length).toBeGreaterThanOrEqual(1);
    expect(candles.length).toBeLessThanOrEqual(2); // the trades may straddle a minute boundary
    for (const c of candles) {
      expect(c.source).toBe('LIVE');
      expect(c.t).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00\.000Z$/);
    }
    expect(candles[0].o).toBe('2000000000');
    expect(candles.at(-1).c).toBe('2010000000');
    expect(candles.reduce((x: bigint, c: any) => x + BigInt(c.v), 0n)).toBe(1200n);
    const hourly = ok(await a.get('/ohlcv/ETH-USDC'));
    expect(hourly.length).toBeGreaterThanOrEqual(1);

    // Both sides: 2 + 0.402 USDC each. Taker holds +0.0012 ETH worth 2.412 at the last price.
    const board = ok(await a.get('/leaderboard'));
    expect(board.length).toBe(2);
    const by = new Map(board.map((e: any) => [e.address, e]));
    expect(by.get(taker.address)).toEqual({
      rank: expect.any(Number), address: taker.address, volume_usdc: '2402000', pnl_usdc: String(10_000 - taker_fees), trades: 2,
    });
    expect(by.get(maker.address)).toEqual({
      rank: expect.any(Number), address: maker.address, volume_usdc: '2402000', pnl_usdc: String(-10_000 - maker_fees), trades: 2,
    });
    expect(board.map((e: any) => e.rank)).toEqual([1, 2]);
    expect(board.map((e: any) => e.address)).toEqual([maker.address, taker.address].sort());
    expect(ok(await a.get('/leaderboard?limit=1')).length).toBe(1);

    // Restart on the same data dir: the journal replay rebuilds both.
    const stopped = await s.stop();
    expect(stopped.code).toBe(0);
    servers.length = 0;
    s = await start();
    a = api(s.url);
    expect(ok(await a.get('/ohlcv/ETH-USDC?interval=1m'))).toEqual(candles);
    expect(ok(await a.get('/leaderboard'))).toEqual(board);
  });

  it('answers INVALID_REQUEST naming the parameter, MARKET_NOT_FOUND for an unknown market', async () => {
    const s = servers[0] ?? (await start());
    const a = api(s.url);
    fail(await a.get('/ohlcv/ETH-USDC?interval=2m'), 400, 'INVALID_REQUEST', 'interval');
    fail(await a.get('/ohlcv/ETH-USDC?limit=501'), 400, 'INVALID_REQUEST', 'limit');
    fail(await a.get('/ohlcv/ETH-USDC?limit=0'), 400, 'INVALID_REQUEST', 'limit');
    fail(await a.get('/ohlcv/ETH-USDC?since=yesterday'), 400, 'INVALID_REQUEST', 'since');
    fail(await a.get('/ohlcv/ETH-USDC?since=2026-02-30T00:00:00Z'), 400, 'INVALID_REQUEST', 'since');
    fail(await a.get('/ohlcv/DOGE-USDC'), 404, 'MARKET_NOT_FOUND');
    fail(await a.get('/leaderboard?limit=1001'), 400, 'INVALID_REQUEST', 'limit');
    expect(ok(await a.get('/ohlcv/ETH-USDC?interval=1d&limit=500&since=2020-01-01'))).toEqual(expect.any(Array));
    expect(ok(await a.get('/ohlcv/ETH-USDC?since=2099-01-01T00:00:00.000%2B02:00'))).toEqual([]);
  });
});
