// Worker entry for bench/flow.ts: generates the flow off the timing thread (see flow.ts for why)
// and transfers its columns back.
import { parentPort, workerData } from 'node:worker_threads';
import { flowBuffers, generateFlow, type FlowOptions } from './flow.js';

const result = generateFlow(workerData as FlowOptions);
parentPort?.postMessage(result, flowBuffers(result.flow));
