// Reading state diffs for fraud proofs: a change decoded into named fields, and the first leaf on
// which two diffs (re-executed and published) disagree.
import { hexToBytes } from './hex.js';
import { LEAF_KIND_NAMES, describeLeaf, type LeafChange } from './state_leaves.js';

/** Readable form of a published or recomputed change (fraud proofs). */
export function describeChange(c: LeafChange | null): Record<string, unknown> | null {
  if (c === null) return null;
  const key = hexToBytes(c.key, undefined, 'leaf key');
  const value = c.value === null ? null : hexToBytes(c.value, undefined, 'leaf value');
  const d = describeLeaf(c.kind, key, value);
  return { id: d.id, kind: LEAF_KIND_NAMES[c.kind] ?? String(c.kind), key: c.key, value: c.value, fields: value === null ? 'removed' : d.fields };
}

/** First leaf on which two state diffs disagree (canonical order = by leaf id string). */
export function firstDifferingChange(ours: readonly LeafChange[], theirs: readonly LeafChange[]):
  { id: string; expected: Record<string, unknown> | null; found: Record<string, unknown> | null } | null {
  const idOf = (c: LeafChange): string => `${c.kind}:${c.key}`;
  const a = new Map(ours.map((c) => [idOf(c), c]));
  const b = new Map(theirs.map((c) => [idOf(c), c]));
  // Walk in our order (sort-key order), then theirs for leaves only they changed.
  for (const c of ours) {
    const t = b.get(idOf(c));
    if (t === undefined || t.value !== c.value) {
      return { id: String(describeChange(c)?.id), expected: describeChange(c), found: t === undefined ? null : describeChange(t) };
    }
  }
  for (const t of theirs) {
    if (!a.has(idOf(t))) return { id: String(describeChange(t)?.id), expected: null, found: describeChange(t) };
  }
  return null;
}
