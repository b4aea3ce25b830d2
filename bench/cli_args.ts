// The command line of the reliability runs (bench/fuzz.ts, bench/soak.ts): `--long` picks the
// long options, `--name N` overrides one number, and a script runs its main only when it is the
// entry point (tests import the same modules).
// runMain is how every bench runs its main (a throw exits 1).
import { pathToFileURL } from 'node:url';

/** The short or long options (`--long`), a copy the caller may change. */
export function shortOrLong<T extends object>(args: readonly string[], short: T, long: T): T {
  return { ...(args.includes('--long') ? long : short) };
}

/** The number after `--name`, or undefined when the flag is absent. */
export function numberArg(args: readonly string[], name: string): number | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : undefined;
}

/** Runs `main` when `meta_url` is the script node was started with; a throw exits 1. */
export function runIfMain(meta_url: string, main: () => Promise<void>): void {
  if (meta_url !== pathToFileURL(process.argv[1] ?? '').href) return;
  runMain(main);
}

/**
 * Runs a bench's `main`; a throw prints it and exits 1 at once (process.exit, not exitCode: a
 * worker or socket the failed run left open must not keep the process alive).
 */
export function runMain(main: () => Promise<void>): void {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
