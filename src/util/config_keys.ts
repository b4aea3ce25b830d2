// Unknown config keys (docs/operations.md "Configuration"): a key the reader never asks for has no
// effect, so a misspelt limit (`verify.task_item_max`) would leave the operator believing it is
// set. The known keys are not listed anywhere: validateConfig reads the raw config through a view
// that records every key it asks for (present or not), and whatever the file holds beyond those is
// refused. A key added to the reader is therefore known at once; there is no second list to drift.

/** One key the config holds that the reader never asked for, and the known key it probably meant. */
export interface UnknownKey {
  path: string;
  suggestion: string | null;
}

/** A JSON object (not null, not an array): what a config section must be. */
export function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function keyPath(at: string, key: string): string {
  return at === '' ? key : `${at}.${key}`;
}

/** Where each view sits: which KeyReads records it, at which path. */
const VIEW_PLACES = new WeakMap<object, { reads: KeyReads; at: string }>();

/**
 * What the reader takes for an optional section the config leaves out (`section(r, 'verify')`
 * with no `verify`): an empty object, recorded like a present one when `parent` is a view, so the
 * section's keys are known (and offered: `limits.steal_after_us` -> `verify.steal_after_us`)
 * whether or not the file has the section.
 */
export function absentSection(parent: Record<string, unknown>, key: string): Record<string, unknown> {
  const place = VIEW_PLACES.get(parent);
  if (place === undefined) return {};
  return place.reads.view({}, keyPath(place.at, key)) as Record<string, unknown>;
}

/** Records, per object path (`''` the top level, `verify`, `assets[0]`, `threads.background`), the keys asked for. */
export class KeyReads {
  private readonly asked = new Map<string, Set<string>>();
  private readonly views = new WeakMap<object, unknown>();

  /**
   * A view of `raw` for the reader: the same values, with every string key asked of a plain object
   * (by `.k`, `[k]` or `k in`) recorded; objects and arrays under it come as views too.
   */
  view(raw: unknown, at = ''): unknown {
    if (typeof raw !== 'object' || raw === null) return raw;
    const cached = this.views.get(raw);
    if (cached !== undefined) return cached;
    const is_array = Array.isArray(raw);
    const v = new Proxy(raw, {
      get: (target, key) => {
        const value: unknown = Reflect.get(target, key);
        if (typeof key !== 'string') return value;
        if (is_array) return /^(0|[1-9][0-9]*)$/.test(key) ? this.child(target, key, value, `${at}[${key}]`) : value;
        this.ask(at, key);
        return Object.hasOwn(target, key) ? this.child(target, key, value, keyPath(at, key)) : value;
      },
      has: (target, key) => {
        if (typeof key === 'string' && !is_array) this.ask(at, key);
        return Reflect.has(target, key);
      },
    });
    this.views.set(raw, v);
    VIEW_PLACES.set(v, { reads: this, at });
    return v;
  }

  private child(target: object, key: string, value: unknown, at: string): unknown {
    // A proxy must give a frozen property's own value back (the Proxy invariant): read such a one untracked.
    const d = Object.getOwnPropertyDescriptor(target, key);
    if (d !== undefined && d.configurable === false && d.writable === false) return value;
    return this.view(value, at);
  }

  private ask(at: string, key: string): void {
    let s = this.asked.get(at);
    if (s === undefined) this.asked.set(at, (s = new Set()));
    s.add(key);
  }

  /** The keys of `raw` (walked in full, arrays too) the reader never asked for, in file order. */
  unknownKeys(raw: unknown): UnknownKey[] {
    const out: UnknownKey[] = [];
    const walk = (x: unknown, at: string): void => {
      if (Array.isArray(x)) {
        x.forEach((e, i) => walk(e, `${at}[${i}]`));
        return;
      }
      if (!isPlainObject(x)) return;
      const asked = this.asked.get(at) ?? new Set<string>();
      for (const key of Object.keys(x)) {
        if (asked.has(key)) walk(x[key], keyPath(at, key));
        else out.push({ path: keyPath(at, key), suggestion: this.closest(at, key) });
      }
    };
    walk(raw, '');
    return out;
  }

  /**
   * The known key `key` (at `at`) probably meant: the nearest by edit distance in the same object,
   * else the one key there it is a whole word of, else the nearest elsewhere (`limits.steal_after_us` -> `verify.steal_after_us`), within
   * misspellingEditsMax(key); null when none is that close.
   */
  private closest(at: string, key: string): string | null {
    const bound = misspellingEditsMax(key);
    for (const same_level of [true, false]) {
      let best_path: string | null = null;
      let best_d = bound + 1;
      for (const [where, keys] of this.asked) {
        if ((where === at) !== same_level) continue;
        for (const k of keys) {
          const d = editDistance(key.toLowerCase(), k.toLowerCase());
          if (d < best_d) [best_path, best_d] = [keyPath(where, k), d];
        }
      }
      if (best_path !== null) return best_path;
      if (same_level) {
        // A word of the key left out (`tick` for `tick_size`), when only one key there has it.
        const words = [...(this.asked.get(at) ?? [])].filter((k) => k.startsWith(`${key}_`) || k.endsWith(`_${key}`));
        if (words.length === 1) return keyPath(at, words[0]);
      }
    }
    return null;
  }
}

/**
 * Edits a misspelling may be away from the key it means: one per four characters, 1..3. `cpus`
 * -> `cpu` (1 of 4 characters), `task_item_max` -> `task_items_max` (1), but `port` is not offered
 * for `host` (2 edits of 4 characters: a different word).
 */
function misspellingEditsMax(key: string): number {
  return Math.min(3, Math.max(1, Math.floor(key.length / 4)));
}

/**
 * Edit distance counting an insertion, deletion, substitution or swap of two neighbours as one
 * (optimal string alignment: `hots` is one edit from `host`); keys are short (< 40 characters).
 */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** `unknown key verify.task_item_max (did you mean verify.task_items_max?)`, several joined by `; `. */
export function unknownKeysMessage(keys: readonly UnknownKey[]): string {
  return keys.map((k) => `unknown key ${k.path}${k.suggestion === null ? '' : ` (did you mean ${k.suggestion}?)`}`).join('; ');
}
