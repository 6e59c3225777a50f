import type { CommandDef } from '../define.js';
import { optList, optString } from '../io.js';
import { CharmsError } from '../../errors.js';
import { toHex } from '../../util/bytes.js';
import { destForAddress, destForApps } from '../../chains/dest.js';

const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  const addr = optString(a, 'addr');
  const apps = optList(a, 'apps');
  const chain = optString(a, 'chain') as 'bitcoin' | 'cardano' | undefined;
  if ((addr === undefined) === (apps.length === 0)) throw new CharmsError('INVALID_INPUT', 'exactly one of --addr or --apps must be provided');
  const dest = addr !== undefined ? destForAddress(addr, chain) : destForApps(apps, chain);
  ctx.stdout(`${toHex(dest)}\n`);
};
export default run;
