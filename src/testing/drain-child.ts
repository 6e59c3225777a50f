/**
 * Test helper process: a proving server started through the servers' own start-up and stop
 * (cli/serve.ts), whose prove function takes as long as the request body says (`{"ms": N}`) and,
 * like a real prover, refuses to start a proof once the server is stopping (`{"ms": N, "paid":
 * true}` checks after the wait). Environment: the server settings (SVC_DRAIN_TIMEOUT_MS, …).
 * Prints the port on stdout once listening, and `started <id>` as each proof starts.
 */
import { serve } from '../cli/serve.js';
import { loadSettings } from '../settings/settings.js';
import { startProveServer } from '../prove-server/server.js';
import { refuseWhenStopping } from '../prover/backend.js';

const settings = loadSettings(process.env);
await serve({ port: '0', ip: '127.0.0.1' }, settings, async ({ host, port, log, stopping }) => {
  const server = await startProveServer({
    host,
    port,
    log,
    limits: settings.limits,
    ready: async () => true,
    prove: async ({ body }) => {
      const req = JSON.parse(new TextDecoder().decode(body)) as { ms: number; paid?: boolean; id?: number };
      process.stdout.write(`started ${req.id ?? 0}\n`);
      await new Promise((r) => setTimeout(r, req.ms));
      if (req.paid) refuseWhenStopping(stopping);
      return new TextEncoder().encode(JSON.stringify([{ bitcoin: `done-${req.id ?? 0}` }]));
    },
  });
  process.stdout.write(`${server.port}\n`);
  return { server, banner: 'drain child listening', fields: {} };
});
