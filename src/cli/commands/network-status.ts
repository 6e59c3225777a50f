import type { CommandDef } from '../define.js';
import { CharmsError } from '../../errors.js';
import { redactText } from '../../util/redact.js';
import { proverConfig } from '../../settings/settings.js';
import { NetworkBackend, networkPlan } from '../../prover/network/backend.js';

/**
 * The operator's smoke test: the Prover Network account (never the key), its $PROVE balance and
 * whether both Charms programs are registered where each stage runs. Exits 1 when it could not
 * prove. Free: it only reads (GetProgram, GetBalance).
 */
const run: NonNullable<CommandDef['run']> = async (_a, ctx) => {
  const config = proverConfig(ctx.env);
  const plan = networkPlan(config);
  if ('unavailable' in plan) throw new CharmsError('PROVER_UNAVAILABLE', plan.unavailable);
  // One attempt per call, 20 s each: a smoke test answers quickly instead of retrying for minutes.
  const backend = new NetworkBackend(plan, { client: { defaultTimeoutMs: 20_000 } });
  try {
    const where = plan.app.url === plan.wrapper.url ? plan.app.url : `${plan.app.url} and ${plan.wrapper.url}`;
    ctx.stderr(`asking ${redactText(where)}…\n`);
    const status = await backend.status();
    ctx.stdout(`${JSON.stringify(status, null, 2)}\n`);
    return status.ready ? 0 : 1;
  } finally {
    backend.close();
  }
};
export default run;
