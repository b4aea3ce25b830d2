// The one way a bench takes its knobs: `--name value` (or `--name=value`, the form for a value
// that itself starts with `--`: `--server-flags=--trace-gc`) on the command line, else the environment
// variable BENCH_NAME (the name upper-cased, dashes as underscores: `--ref-target-ms` or
// BENCH_REF_TARGET_MS), else the default. Numbers are checked against their range (`_` allowed as
// a digit separator) and an option nobody read is an error at finish(): a typo must not silently
// run the default.

export class Knobs {
  private readonly argv: readonly string[];
  private readonly env: NodeJS.ProcessEnv;
  private readonly read = new Set<string>();

  constructor(argv: readonly string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env) {
    this.argv = argv;
    this.env = env;
  }

  /** The raw text of knob `name` (undefined: not given). */
  private raw(name: string): string | undefined {
    this.read.add(`--${name}`);
    const joined = this.argv.find((a) => a.startsWith(`--${name}=`));
    if (joined !== undefined) {
      const v = joined.slice(name.length + 3);
      if (v === '') throw new RangeError(`--${name} needs a value`);
      return v;
    }
    const at = this.argv.indexOf(`--${name}`);
    if (at >= 0) {
      const v = this.argv[at + 1];
      if (v === undefined || v.startsWith('--')) throw new RangeError(`--${name} needs a value (one starting with -- goes as --${name}=value)`);
      return v;
    }
    const v = this.env[`BENCH_${name.toUpperCase().replace(/-/g, '_')}`];
    return v === undefined || v === '' ? undefined : v;
  }

  number(name: string, fallback: number, min: number, max: number, opts: { integer?: boolean } = {}): number {
    const text = this.raw(name);
    if (text === undefined) return fallback;
    const n = Number(text.replace(/_/g, ''));
    if (!Number.isFinite(n) || n < min || n > max || (opts.integer !== false && !Number.isInteger(n))) {
      throw new RangeError(`${name} must be ${opts.integer !== false ? 'an integer' : 'a number'} in [${min}, ${max}], got ${text}`);
    }
    return n;
  }

  string(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  optionalString(name: string): string | undefined {
    return this.raw(name);
  }

  /** `--name` alone, or BENCH_NAME=1. */
  flag(name: string): boolean {
    this.read.add(`--${name}`);
    if (this.argv.includes(`--${name}`)) return true;
    return this.env[`BENCH_${name.toUpperCase().replace(/-/g, '_')}`] === '1';
  }

  /** Comma-separated numbers, each in [min, max]. */
  numbers(name: string, fallback: readonly number[], min: number, max: number): number[] {
    const text = this.raw(name);
    if (text === undefined) return [...fallback];
    return text.split(',').map((part) => {
      const n = Number(part.trim());
      if (!Number.isInteger(n) || n < min || n > max) throw new RangeError(`${name} must list integers in [${min}, ${max}], got ${text}`);
      return n;
    });
  }

  /** Throws on a command-line option no knob read (call after reading them all). */
  finish(): void {
    for (const a of this.argv) {
      const name = a.includes('=') ? a.slice(0, a.indexOf('=')) : a;
      if (a.startsWith('--') && !this.read.has(name)) throw new RangeError(`unknown option ${name}`);
    }
  }
}
