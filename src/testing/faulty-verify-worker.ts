/**
 * A spell verification thread for the pool's fault tests (indexer/verify-pool.test.ts): the real
 * thread's answers, except for batches whose first transaction is one marker byte:
 * 0xc1 throws (the thread crashes), 0xc2 makes the thread exit, 0xc3 spins forever (a hang), and
 * 0xc4 crashes only while the file named by VERIFY_FAULT_ONCE exists (it is removed first: the
 * retry on a fresh thread then answers).
 */
import { existsSync, rmSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { answerVerifyTask, verifyBackends, type VerifyTask } from '../indexer/verify-task.js';

export const FAULT = { crash: 0xc1, exit: 0xc2, hang: 0xc3, crashOnce: 0xc4 } as const;

const port = parentPort;
if (port)
  port.on('message', (t: VerifyTask) => {
    const first = t.raws[0];
    const marker = first?.length === 1 ? first[0] : undefined;
    if (marker === FAULT.crash) throw new Error('injected crash');
    if (marker === FAULT.exit) process.exit(3);
    if (marker === FAULT.hang) for (;;);
    const once = process.env.VERIFY_FAULT_ONCE;
    if (marker === FAULT.crashOnce && once && existsSync(once)) {
      rmSync(once);
      throw new Error('injected crash (once)');
    }
    void verifyBackends(t.mock).then(() => port.postMessage(answerVerifyTask(t)));
  });
