import type { Run } from '../define.js';
import type { appNewArgs, appNewOptions } from '../options.js';
import { lines } from '../output.js';
import { newAppProject } from '../../app/new.js';
import { resolve } from 'node:path';
import { CharmsError } from '../../errors.js';

const run: Run<typeof appNewOptions, typeof appNewArgs> = async (a, ctx) => {
  const template = a.opts.template;
  const name = a.args.NAME;
  // resolve() of an empty name is the current directory: say what is wrong instead of "already exists"
  if (name.trim() === '') throw new CharmsError('INVALID_INPUT', 'the app name is empty: give the new app a name, e.g. `charms app new my-app`');
  const dir = newAppProject(resolve(ctx.cwd, name), template);
  ctx.stderr(`created ${template} app in ${dir}\n`);
  return lines(dir);
};
export default run;
