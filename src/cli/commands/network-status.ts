import type { Run } from '../define.js';
import { json, valueOfPlain, withExitCode } from '../output.js';
import { CharmsError } from '../../errors.js';
import { redactText } from '../../util/redact.js';
import { proverConfig } from '../../settings/settings.js';
import { NetworkBackend, networkPlan } from '../../prover/network/backend.js';

/**
 * The operator's smoke test: the Prover Network account (never the key), its $PROVE balance and
 * whether both Charms programs are registered where each stage runs. Exits 1 when it could not
 * prove. Free: it only reads (GetProgram, GetBalance).
 */
const run: Run = async (_a, ctx) => {
  let config = proverConfig(ctx.env);
  // The account is what this command checks: with a key but no network backend chosen, check the
  // network anyway (and say that servers will not use it) instead of reporting the CPU backend.
  if (config.networkPrivateKey && config.appProver !== 'network' && !config.gpuServiceUrl) {
    ctx.stderr('APP_ZK_PROVER is not "network": checking the Prover Network account anyway; set APP_ZK_PROVER=network for charms-prover to prove there\n');
    config = { ...config, appProver: 'network' };
  }
  const plan = networkPlan(config);
  if ('unavailable' in plan) throw new CharmsError('PROVER_UNAVAILABLE', plan.unavailable);
  // One attempt per call, 20 s each: a smoke test answers quickly instead of retrying for minutes.
  const backend = new NetworkBackend(plan, { client: { defaultTimeoutMs: 20_000 } });
  try {
    const where = plan.app.url === plan.wrapper.url ? plan.app.url : `${plan.app.url} and ${plan.wrapper.url}`;
    ctx.stderr(`asking ${redactText(where)}…\n`);
    const status = await backend.status();
    return withExitCode(json(valueOfPlain(status), { pretty: true }), status.ready ? 0 : 1);
  } finally {
    backend.close();
  }
};
export default run;
