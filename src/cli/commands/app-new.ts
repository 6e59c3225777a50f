import type { CommandDef } from '../define.js';
import { optDefaulted } from '../io.js';
import { newAppProject, type Template } from '../../app/new.js';
import { resolve } from 'node:path';

const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  const template = optDefaulted(a, 'template') as Template;
  const dir = newAppProject(resolve(ctx.cwd, a.args[0]!), template);
  ctx.stderr(`created ${template} app in ${dir}\n`);
  ctx.stdout(`${dir}\n`);
};
export default run;
