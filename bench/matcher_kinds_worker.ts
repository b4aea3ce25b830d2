// Worker entry for bench/matcher_kinds.ts: classifies the flow file's measured rows off the
// timing thread (matcher_kinds.ts says why) and transfers the kinds back.
import { parentPort, workerData } from 'node:worker_threads';
import { readFlowFile } from './flow_file.js';
import { classifyFlow } from './matcher_kinds.js';

const result = classifyFlow(readFlowFile((workerData as { flow_path: string }).flow_path).flow);
parentPort?.postMessage(result, [result.kinds.buffer as ArrayBuffer]);
