// The contracts' compiled artifacts (ABI + bytecode), generated from contracts/*.sol by the solc
// npm package (pinned in package.json) and cached under .contracts-cache/<hash>.json, keyed by the
// compiler version and every source it reads. `make build` fills the cache
// (dist/src/settlement/compile_contracts.js); tests and the CLI load it, compiling on a miss.
// solc is a dev dependency: a deployment that ships the cache file never loads it.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The solc version the cache key and the pin in package.json name. */
export const SOLC_VERSION = '0.8.30';

export interface ContractArtifact {
  abi: AbiItem[];
  /** Creation bytecode, 0x hex. */
  bytecode: string;
}

export interface AbiItem {
  type: string;
  name?: string;
  inputs?: { name: string; type: string; indexed?: boolean }[];
  outputs?: { name: string; type: string }[];
  stateMutability?: string;
}

export interface Artifacts {
  source_hash: string;
  solc_version: string;
  contracts: Record<string, ContractArtifact>;
}

/** The repository root (src/settlement and dist/src/settlement both sit below it). */
export function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(path.join(dir, 'contracts', 'Settlement.sol'))) return dir;
    dir = path.dirname(dir);
  }
  throw new Error('contracts/Settlement.sol not found above ' + fileURLToPath(import.meta.url));
}

function ownSources(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string): void => {
    for (const e of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const r = path.posix.join(rel, e.name);
      if (e.isDirectory()) walk(r);
      else if (e.name.endsWith('.sol')) out.set(r, readFileSync(path.join(root, r), 'utf8'));
    }
  };
  walk('contracts');
  return out;
}

/** Resolves `@openzeppelin/...` imports from node_modules (the vendored npm package). */
function resolveImport(root: string, name: string): string | null {
  const rel = name.startsWith('@openzeppelin/') ? path.join(root, 'node_modules', name) : path.join(root, name);
  return existsSync(rel) ? readFileSync(rel, 'utf8') : null;
}

/** The cache key: compiler version, OpenZeppelin version and every own source. */
function sourceHash(root: string, sources: Map<string, string>): string {
  const h = createHash('sha256');
  h.update(SOLC_VERSION + '\n');
  const oz = path.join(root, 'node_modules', '@openzeppelin', 'contracts', 'package.json');
  h.update(existsSync(oz) ? (JSON.parse(readFileSync(oz, 'utf8')) as { version: string }).version : 'no-oz');
  for (const [name, text] of [...sources].sort(([a], [b]) => (a < b ? -1 : 1))) h.update(`\n${name}\n${text}`);
  return h.digest('hex').slice(0, 32);
}

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: AbiItem[]; evm: { bytecode: { object: string } } }>>;
}

function compile(root: string, sources: Map<string, string>): Record<string, ContractArtifact> {
  const require = createRequire(import.meta.url);
  const solc = require('solc') as { version(): string; compile(input: string, opts: { import: (p: string) => { contents?: string; error?: string } }): string };
  if (!solc.version().startsWith(SOLC_VERSION + '+')) {
    throw new Error(`solc ${solc.version()} installed, ${SOLC_VERSION} expected (package.json pins it)`);
  }
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries([...sources].map(([k, v]) => [k, { content: v }])),
    settings: {
      // 200 runs: the usual trade of deployment size against call gas (docs/benchmarks.md gas).
      optimizer: { enabled: true, runs: 200 },
      evmVersion: 'cancun',
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input), {
    import: (p: string) => {
      const text = resolveImport(root, p);
      return text === null ? { error: `not found: ${p}` } : { contents: text };
    },
  })) as SolcOutput;
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error('solc: ' + errors.map((e) => e.formattedMessage).join('\n'));
  const contracts: Record<string, ContractArtifact> = {};
  for (const [file, byName] of Object.entries(out.contracts ?? {})) {
    if (!file.startsWith('contracts/')) continue;
    for (const [name, c] of Object.entries(byName)) {
      if (c.evm.bytecode.object.length === 0) continue; // libraries inlined, interfaces
      contracts[name] = { abi: c.abi, bytecode: '0x' + c.evm.bytecode.object };
    }
  }
  return contracts;
}

let loaded: Artifacts | null = null;

/** The artifacts of the current sources: from the cache, or compiled once and cached. */
export function loadArtifacts(root = repoRoot()): Artifacts {
  if (loaded !== null) return loaded;
  const sources = ownSources(root);
  const hash = sourceHash(root, sources);
  const dir = path.join(root, '.contracts-cache');
  const file = path.join(dir, `${hash}.json`);
  if (existsSync(file)) {
    loaded = JSON.parse(readFileSync(file, 'utf8')) as Artifacts;
    return loaded;
  }
  const artifacts: Artifacts = { source_hash: hash, solc_version: SOLC_VERSION, contracts: compile(root, sources) };
  mkdirSync(dir, { recursive: true });
  // Written under a temporary name then renamed: parallel test workers never read half a file.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(artifacts));
  renameSync(tmp, file);
  // Older sources' artifacts are dead weight (one file per edit of a contract otherwise).
  for (const f of readdirSync(dir)) {
    if (/^[0-9a-f]{32}\.json$/.test(f) && f !== `${hash}.json`) rmSync(path.join(dir, f), { force: true });
  }
  loaded = artifacts;
  return loaded;
}

export function artifact(name: string): ContractArtifact {
  const a = loadArtifacts().contracts[name];
  if (a === undefined) throw new Error(`no compiled contract ${name}`);
  return a;
}
