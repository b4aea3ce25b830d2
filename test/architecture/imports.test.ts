// The import rule of docs/architecture.md ("Folders and the direction of imports"), kept by a
// walk over src/: no import cycle between files, and no folder importing a folder at or above
// its own layer in the data flow. A new folder must be given a layer here (and in the doc).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

/**
 * Layers, lowest first: a file may import its own folder and folders of lower layers only.
 * Files directly in src/ are named by file.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['util', 'money'],
  ['engine', 'auth'],
  ['ring'],
  ['journal', 'read_model', 'config', 'client'],
  ['matcher', 'marketdata'],
  ['da'],
  ['snapshot', 'settlement'],
  ['gateway'],
  ['cluster'],
  ['main.ts'],
  ['cli', 'web'],
];

/** Back edges the rule tolerates, each with its reason (none today: keep it that way). */
const KNOWN_BACK_EDGES: ReadonlyMap<string, string> = new Map<string, string>([]);

/** Static imports and re-exports, dynamic import(), and bare side-effect imports of relative paths. */
const IMPORT_RE = /(?:^|\n)\s*(?:import|export)\s[^;'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)|(?:^|\n)\s*import\s+['"](\.{1,2}\/[^'"]+)['"]/g;

/** file (relative to src/) -> the src files it imports. */
function importGraph(root: string): Map<string, string[]> {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const name of fs.readdirSync(dir)) {
      const p = path.join(dir, name);
      if (fs.statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts')) files.push(p);
    }
  };
  walk(root);
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const text = fs.readFileSync(f, 'utf8');
    const targets: string[] = [];
    for (const m of text.matchAll(IMPORT_RE)) {
      const spec = m[1] ?? m[2] ?? m[3];
      const target = path.resolve(path.dirname(f), spec).replace(/\.js$/, '.ts');
      if (!target.startsWith(root + path.sep)) throw new Error(`${path.relative(root, f)} imports outside src/: ${spec}`);
      if (!fs.existsSync(target)) throw new Error(`${path.relative(root, f)} imports a missing file: ${spec}`);
      targets.push(path.relative(root, target));
    }
    graph.set(path.relative(root, f), targets);
  }
  return graph;
}

/** Strongly connected components of more than one file (or a file importing itself). */
export function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on_stack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    on_stack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on_stack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on_stack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

/** The folder of a src-relative file: its first directory, or the file itself at the top. */
function folderOf(file: string): string {
  return file.split(path.sep)[0];
}

/** Imports that go to the same or a higher layer than the importer's, as "from -> to". */
export function backEdges(graph: ReadonlyMap<string, readonly string[]>, layers: readonly (readonly string[])[]): string[] {
  const layer = new Map<string, number>();
  layers.forEach((names, i) => names.forEach((n) => layer.set(n, i)));
  const out: string[] = [];
  for (const [from, targets] of graph) {
    const a = folderOf(from);
    for (const to of targets) {
      const b = folderOf(to);
      if (a === b) continue;
      const la = layer.get(a);
      const lb = layer.get(b);
      if (la === undefined || lb === undefined) throw new Error(`no layer for ${la === undefined ? a : b} (test/architecture/imports.test.ts)`);
      if (lb >= la) out.push(`${from} -> ${to}`);
    }
  }
  return out;
}

describe('import direction', () => {
  const graph = importGraph(SRC);

  it('walks the whole tree', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get(path.join('gateway', 'server.ts'))).toContain(path.join('gateway', 'matcher_link.ts'));
  });

  it('gives every folder of src/ a layer', () => {
    const named = new Set(LAYERS.flat());
    const folders = new Set([...graph.keys()].map(folderOf));
    expect([...folders].filter((f) => !named.has(f))).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('imports only downward in the data flow (known exceptions listed with their reason)', () => {
    const back = backEdges(graph, LAYERS).map((e) => e.split(path.sep).join('/'));
    expect(back.filter((e) => !KNOWN_BACK_EDGES.has(e))).toEqual([]);
    // An exception that no longer occurs must leave the list.
    for (const e of KNOWN_BACK_EDGES.keys()) expect(back, `stale exception ${e}`).toContain(e);
  });

  it('the checks catch what they look for', () => {
    const g = new Map([
      ['ring/a.ts', ['engine/b.ts']],
      ['engine/b.ts', ['engine/c.ts']],
      ['engine/c.ts', ['ring/a.ts']],
    ]);
    expect(cycles(g)).toEqual([['engine/b.ts', 'engine/c.ts', 'ring/a.ts']]);
    expect(backEdges(g, [['engine'], ['ring']])).toEqual(['engine/c.ts -> ring/a.ts']);
    expect(cycles(new Map([['util/x.ts', ['util/x.ts']]]))).toEqual([['util/x.ts']]);
  });
});
