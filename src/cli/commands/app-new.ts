import type { CommandDef } from '../define.js';
import { optDefaulted } from '../io.js';
import { newAppProject, type Template } from '../../app/new.js';
import { resolve } from 'node:path';
import { CharmsError } from '../../errors.js';

const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  const template = optDefaulted(a, 'template') as Template;
  const name = a.args[0]!;
  // resolve() of an empty name is the current directory: say what is wrong instead of "already exists"
  if (name.trim() === '') throw new CharmsError('INVALID_INPUT', 'the app name is empty: give the new app a name, e.g. `charms app new my-app`');
  const dir = newAppProject(resolve(ctx.cwd, name), template);
  ctx.stderr(`created ${template} app in ${dir}\n`);
  ctx.stdout(`${dir}\n`);
};
export default run;
