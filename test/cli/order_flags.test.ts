// The order flags (src/cli/common.ts orderFlags), one parser for `ringbook order` and
// `ringbook force-include order`: defaults, the limit/market rules and the usage errors.
import { describe, expect, it } from 'vitest';
import { orderFlags, parseArgs, UsageError } from '../../src/cli/common.js';
import { forcedRequestOf } from '../../src/cli/programmes.js';

const flags = (argv: string[]) => orderFlags(parseArgs(argv));

describe('orderFlags', () => {
  it('reads a limit order with decimal price and quantity as units, gtc by default', () => {
    expect(flags(['--market', 'ETH-USDC', '--side', 'ask', '--price', '2000.5', '--quantity', '0.25', '--client-id', 'c1'])).toEqual({
      market_id: 'ETH-USDC', side: 'ask', quantity: 250_000, order_type: 'limit', time_in_force: 'gtc', price: 2_000_500_000, client_order_id: 'c1',
    });
  });

  it('gives a market order ioc by default and no price', () => {
    expect(flags(['--market', 'ETH-USDC', '--side', 'bid', '--type', 'market', '--quantity', '1'])).toEqual({
      market_id: 'ETH-USDC', side: 'bid', quantity: 1_000_000, order_type: 'market', time_in_force: 'ioc',
    });
  });

  it('refuses a missing side, a limit without price, a market with price and an unknown tif', () => {
    expect(() => flags(['--market', 'ETH-USDC', '--price', '1', '--quantity', '1'])).toThrow('--side is required');
    expect(() => flags(['--market', 'ETH-USDC', '--side', 'bid', '--quantity', '1'])).toThrow('--price is required');
    expect(() => flags(['--market', 'ETH-USDC', '--side', 'bid', '--type', 'market', '--price', '1', '--quantity', '1']))
      .toThrow('--price is not allowed with --type market');
    expect(() => flags(['--market', 'ETH-USDC', '--side', 'bid', '--tif', 'day', '--price', '1', '--quantity', '1'])).toThrow(UsageError);
  });

  it('is what a forced order carries, after its kind', () => {
    const argv = ['--market', 'ETH-USDC', '--side', 'bid', '--price', '3', '--quantity', '2'];
    expect(forcedRequestOf('order', parseArgs(argv))).toEqual({ kind: 'order', ...flags(argv) });
  });
});
