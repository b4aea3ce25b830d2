// Credit limits of market makers (DECISIONS, "Credit"). Only accounts the operator gave a limit are
// tracked, so the hot path pays one byte lookup (Ledger.has_credit) for everyone else.
//
// Per credit account and market we keep the resting quantity (valued at the mark once the market
// has traded) and the resting value at the orders' own prices (used until the first trade).

export interface CreditEntry {
  credit_limit_units: number;
  auto_cancel_ratio_ppm: number;
  /** floor(limit x ratio / 1e6): utilization exceeds the ratio exactly when Q > this. */
  threshold_units: number;
  rest_quantity: Float64Array;
  rest_value: Float64Array;
}

export class CreditTable {
  private readonly markets_max: number;
  private readonly entries = new Map<number, CreditEntry>();
  /** Credit accounts ascending: the sweep order after fills. */
  readonly accounts_ascending: number[] = [];

  constructor(markets_max: number) {
    this.markets_max = markets_max;
  }

  get count(): number {
    return this.accounts_ascending.length;
  }

  get(account: number): CreditEntry {
    const e = this.entries.get(account);
    if (e === undefined) throw new Error(`engine assertion failed: account ${account} has a credit entry`);
    return e;
  }

  set(account: number, credit_limit_units: number, auto_cancel_ratio_ppm: number): CreditEntry {
    let e = this.entries.get(account);
    if (e === undefined) {
      e = {
        credit_limit_units: 0,
        auto_cancel_ratio_ppm: 0,
        threshold_units: 0,
        rest_quantity: new Float64Array(this.markets_max),
        rest_value: new Float64Array(this.markets_max),
      };
      this.entries.set(account, e);
      let i = this.accounts_ascending.length;
      while (i > 0 && this.accounts_ascending[i - 1] > account) i--;
      this.accounts_ascending.splice(i, 0, account);
    }
    e.credit_limit_units = credit_limit_units;
    e.auto_cancel_ratio_ppm = auto_cancel_ratio_ppm;
    e.threshold_units = thresholdUnits(credit_limit_units, auto_cancel_ratio_ppm);
    return e;
  }

  remove(account: number): void {
    if (!this.entries.delete(account)) return;
    this.accounts_ascending.splice(this.accounts_ascending.indexOf(account), 1);
  }

  onRestChange(account: number, market: number, d_quantity: number, d_value: number): void {
    const e = this.get(account);
    e.rest_quantity[market] += d_quantity;
    e.rest_value[market] += d_value;
  }
}

/** floor(limit * ratio_ppm / 1e6) without overflow: limit is split so no product passes 2^53. */
function thresholdUnits(limit: number, ratio_ppm: number): number {
  const whole = Math.floor(limit / 1_000_000);
  const rest = limit - whole * 1_000_000;
  // whole * ratio_ppm <= limit (ratio <= 1e6); rest * ratio_ppm < 1e12.
  return whole * ratio_ppm + Math.floor((rest * ratio_ppm) / 1_000_000);
}
