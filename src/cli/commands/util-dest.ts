import type { Run } from '../define.js';
import type { utilDestOptions } from '../options.js';
import { lines } from '../output.js';
import { CharmsError } from '../../errors.js';
import { toHex } from '../../util/bytes.js';
import { destForAddress, destForApps } from '../../chains/dest.js';

const run: Run<typeof utilDestOptions> = async ({ opts }) => {
  const { addr, apps, chain } = opts;
  if ((addr === undefined) === (apps.length === 0)) throw new CharmsError('INVALID_INPUT', 'exactly one of --addr or --apps must be provided');
  const dest = addr !== undefined ? destForAddress(addr, chain) : destForApps(apps, chain);
  return lines(toHex(dest));
};
export default run;
