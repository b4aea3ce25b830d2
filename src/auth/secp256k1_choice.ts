// RINGBOOK_SECP256K1: which secp256k1 library recovers signers (src/auth/recover.ts), an
// operator's switch for an A/B or a way out (docs/operations.md): `auto` (or unset) the machine's
// libsecp256k1 through native/build/secp256k1_recover.node when it loads and passes its self-test,
// else the `secp256k1` npm addon, else @noble/curves; `system` and `npm` that native library or no
// start; `noble` @noble/curves (pure JS: ~22-25x the CPU per recovery, docs/benchmarks.md). Its own module, without
// dependencies, so config/load.ts can refuse a misspelt value at start without loading the libraries.

export const SECP256K1_ENV = 'RINGBOOK_SECP256K1';
export const SECP256K1_CHOICES = ['auto', 'system', 'npm', 'noble'] as const;
export type Secp256k1Choice = (typeof SECP256K1_CHOICES)[number];

/** What `env` asks for, or an error message naming the accepted values. */
export function secp256k1Choice(env: Readonly<Record<string, string | undefined>>): { choice: Secp256k1Choice } | { error: string } {
  const v = env[SECP256K1_ENV];
  if (v === undefined || v === '') return { choice: 'auto' };
  if ((SECP256K1_CHOICES as readonly string[]).includes(v)) return { choice: v as Secp256k1Choice };
  return { error: `${SECP256K1_ENV} must be one of ${SECP256K1_CHOICES.join(', ')} (or unset: auto), not ${JSON.stringify(v)}` };
}
