// `make build`'s web step: bundles the web view (web/src/main.ts, with the SDK of src/client and
// lightweight-charts) with esbuild into dist/web/, next to its index.html and style.css, for the
// server to serve (src/gateway/routes_web.ts; docs/web.md). No CDN: everything the page loads
// comes from dist/web.
//
// Browser variants: a relative import `./x.js` whose folder holds `x.browser.ts` gets that file
// instead (src/auth/secp256k1_native.browser.ts: no native addon; src/util/crc32.browser.ts: no
// zlib; src/util/keccak_wasm.browser.ts: hash-wasm's public hasher, no file read). Any `node:`
// import left in the graph fails the build, so a Node-only path cannot slip
// into the page unnoticed.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

/** The repository root: the nearest ancestor of this file holding package.json and web/. */
function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'web'))) return dir;
    dir = path.dirname(dir);
  }
  throw new Error('web bundle: repository root (package.json + web/) not found');
}

/** Files copied as they are next to the bundle. */
const STATIC_FILES = ['index.html', 'style.css'];

const browserVariants: Plugin = {
  name: 'browser-variants',
  setup(b) {
    b.onResolve({ filter: /^\.\.?\/.*\.js$/ }, (args) => {
      const candidate = path.resolve(args.resolveDir, args.path.replace(/\.js$/, '.browser.ts'));
      return fs.existsSync(candidate) ? { path: candidate } : undefined;
    });
    b.onResolve({ filter: /^node:/ }, (args) => ({
      errors: [{ text: `${args.path} imported by ${path.relative(process.cwd(), args.importer)}: Node-only modules cannot go into the web bundle (add a .browser.ts variant)` }],
    }));
  },
};

export async function bundleWeb(root: string = repoRoot()): Promise<{ out_dir: string; bytes: number }> {
  const out_dir = path.join(root, 'dist', 'web');
  fs.rmSync(out_dir, { recursive: true, force: true });
  fs.mkdirSync(out_dir, { recursive: true });
  await build({
    entryPoints: [path.join(root, 'web', 'src', 'main.ts')],
    outfile: path.join(out_dir, 'app.js'),
    bundle: true,
    format: 'esm', // hash-wasm's keccak is awaited at module top level (src/util/keccak_wasm.ts)
    platform: 'browser',
    target: ['chrome120', 'firefox120', 'safari17'],
    minify: true,
    sourcemap: 'linked',
    // The SDK's socket loads the `ws` package only when no WebSocket constructor is passed; the
    // page always passes the browser's.
    external: ['ws'],
    logLevel: 'warning',
    plugins: [browserVariants],
  });
  for (const f of STATIC_FILES) fs.copyFileSync(path.join(root, 'web', f), path.join(out_dir, f));
  let bytes = 0;
  for (const f of fs.readdirSync(out_dir)) bytes += fs.statSync(path.join(out_dir, f)).size;
  return { out_dir, bytes };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  bundleWeb().then(({ out_dir, bytes }) => {
    console.log(`web bundle: ${path.relative(process.cwd(), out_dir)} (${Math.round(bytes / 1024)} KiB with the source map)`);
  }, (e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
}
