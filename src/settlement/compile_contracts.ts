// `node dist/src/settlement/compile_contracts.js`: compiles contracts/ into .contracts-cache/
// (make build runs it), printing the cache key and each contract's bytecode size.
import { loadArtifacts } from './artifacts.js';

const a = loadArtifacts();
for (const [name, c] of Object.entries(a.contracts)) {
  console.log(`contracts: ${name} ${(c.bytecode.length - 2) / 2} bytes (solc ${a.solc_version}, source ${a.source_hash})`);
}
