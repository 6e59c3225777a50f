import type { CommandDef } from '../define.js';
import { commandTree } from '../commands.js';
import { completionScript, type Shell } from '../completions.js';

const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  ctx.stdout(completionScript(a.args[0] as Shell, commandTree(ctx.prover ? 'charms-prover' : 'charms')));
};
export default run;
