/**
 * Worker-thread entry for a bundled worker script (bundle.ts): runs the bundle named in
 * `workerData.bundle`. The cache is written right after its top level, because idle workers are
 * terminated without an exit event.
 */
import { workerData } from 'node:worker_threads';
import { runBundle } from './bundle.js';

runBundle((workerData as { bundle: string }).bundle, 'now');
