import { resolve } from 'node:path';
import type { Run } from '../define.js';
import type { appKeygenOptions } from '../options.js';
import { lines } from '../output.js';
import { defaultKeyFile } from '../io.js';
import { appKeyFileText, generateAppKey } from '../../keys/app-key.js';
import { writeSecretFile } from '../../keys/key-file.js';

const run: Run<typeof appKeygenOptions> = async (a, ctx) => {
  const out = a.opts.out;
  const path = out ? resolve(ctx.cwd, out) : defaultKeyFile(ctx.cwd);
  const key = generateAppKey();
  writeSecretFile(path, appKeyFileText(key));
  ctx.stderr(`wrote ${path} (keep it private: the secret key authorizes new app binaries)\n`);
  return lines(Buffer.from(key.vk).toString('hex'));
};
export default run;
