// The pre-signed lanes the native generator's tests send (native_generator.test.ts, tail.test.ts),
// made in this thread as the bench's signer workers make them: each wallet on one lane, its
// requests in nonce order, each lane one text segment.
import { KIND_ORDER, laneWallets, nextSignedRequest, type NativeSecp256k1, type WalletFlow } from '../../bench/load/flow.js';
import { Lane, textSegment } from '../../bench/load/lanes.js';

/**
 * `rounds` signed requests per wallet of `flows` over `lane_count` lanes; with every request's
 * kind in lane order and each wallet's last order nonce (0 without one).
 */
export function signedLanes(secp: NativeSecp256k1, flows: readonly WalletFlow[], lane_count: number, rounds: number): {
  lanes: Lane[]; kinds: number[]; last_order_nonce: number[];
} {
  const all: number[] = [];
  const last_order_nonce = new Array<number>(flows.length).fill(0);
  const lanes = Array.from({ length: lane_count }, (_, l) => {
    const texts: string[] = [];
    const kinds: number[] = [];
    for (let r = 0; r < rounds; r++) {
      for (const w of laneWallets(l, lane_count, flows.length)) {
        const req = nextSignedRequest(secp, flows[w]);
        texts.push(req.text);
        kinds.push(req.kind);
        all.push(req.kind);
        if (req.kind === KIND_ORDER) last_order_nonce[w] = Number(/"nonce":(\d+)/.exec(req.text)?.[1]);
      }
    }
    const lane = new Lane(l);
    lane.add(textSegment(texts, kinds));
    return lane;
  });
  return { lanes, kinds: all, last_order_nonce };
}
