import { test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from './wait.js';

test('waitFor returns the first truthy value and fails, naming what it waited for, after its bound', async () => {
  let n = 0;
  assert.equal(await waitFor(() => ++n >= 3 && n, 'n to reach 3', { intervalMs: 1 }), 3);
  await assert.rejects(
    waitFor(async () => false, 'something that never happens', { timeoutMs: 30, intervalMs: 5 }),
    /timed out after 30 ms waiting for something that never happens/,
  );
});
