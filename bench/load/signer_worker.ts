// Signer worker: owns the wallets of some lanes and, on request, signs the next `rounds` requests
// of every wallet it owns (one request per wallet per round, wallets in lane order), returning one
// contiguous buffer of HTTP request bytes per lane with the offsets and kinds of its requests.
import { parentPort, workerData } from 'node:worker_threads';
import { DEFAULT_MIX, laneWallets, loadNativeSecp256k1, nextSignedRequest, walletKey, WalletFlow, type FlowMix } from './flow.js';

export interface SignerInit {
  /** Int32Array(1) over this: set to 1 to make a running chunk stop early (clean shutdown). */
  stop: SharedArrayBuffer;
  seed: string;
  lanes: number[];
  lane_count: number;
  wallets: number;
  mix?: FlowMix;
}

export interface SignRequest {
  rounds: number;
}

/** First message of every worker: the addresses of the wallets it owns. */
export interface SignerReady {
  wallets: { index: number; address: string }[];
}

export interface LaneChunk {
  lane: number;
  buf: ArrayBuffer;
  /** count + 1 byte offsets into buf. */
  offsets: Uint32Array;
  kinds: Uint8Array;
}

export interface SignReply {
  chunks: LaneChunk[];
  signed: number;
  /** Wall time this worker spent signing the chunk. */
  wall_ms: number;
}

const port = parentPort;
if (port === null) throw new Error('signer_worker must run as a worker thread');
const init = workerData as SignerInit;
const stop = new Int32Array(init.stop);
const secp = loadNativeSecp256k1();
const mix = init.mix ?? DEFAULT_MIX;
const lanes = init.lanes.map((lane) => ({
  lane,
  flows: laneWallets(lane, init.lane_count, init.wallets).map((w) => new WalletFlow(walletKey(secp, init.seed, w), mix)),
}));

const ready: SignerReady = { wallets: lanes.flatMap((l) => l.flows.map((f) => ({ index: f.key.index, address: f.key.address }))) };
port.postMessage(ready);

port.on('message', (msg: SignRequest) => {
  const t0 = performance.now();
  const chunks: LaneChunk[] = [];
  const transfer: ArrayBuffer[] = [];
  let signed = 0;
  for (const { lane, flows } of lanes) {
    const count = msg.rounds * flows.length;
    const parts: string[] = new Array(count);
    const offsets = new Uint32Array(count + 1);
    const kinds = new Uint8Array(count);
    let at = 0;
    let i = 0;
    for (let r = 0; r < msg.rounds; r++) {
      // Terminating a worker inside the native addon aborts the process, so stop cooperatively.
      if (Atomics.load(stop, 0) !== 0) {
        port.postMessage({ chunks: [], signed: 0, wall_ms: performance.now() - t0 } satisfies SignReply);
        return;
      }
      for (const flow of flows) {
        const req = nextSignedRequest(secp, flow);
        parts[i] = req.text;
        kinds[i] = req.kind;
        offsets[i] = at;
        at += req.text.length; // ASCII: characters are bytes
        i++;
      }
    }
    offsets[count] = at;
    const b = Buffer.from(parts.join(''), 'latin1');
    if (b.length !== at) throw new Error('request text is not ASCII');
    // A Buffer of this size owns its own ArrayBuffer only if it was not pooled: copy to be sure.
    const ab = new ArrayBuffer(b.length);
    new Uint8Array(ab).set(b);
    chunks.push({ lane, buf: ab, offsets, kinds });
    transfer.push(ab, offsets.buffer as ArrayBuffer, kinds.buffer as ArrayBuffer);
    signed += count;
  }
  const reply: SignReply = { chunks, signed, wall_ms: performance.now() - t0 };
  port.postMessage(reply, transfer);
});
