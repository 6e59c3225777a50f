import { resolve } from 'node:path';
import type { CommandDef } from '../define.js';
import { defaultKeyFile, optString } from '../io.js';
import { appKeyFileText, generateAppKey } from '../../keys/app-key.js';
import { writeSecretFile } from '../../keys/key-file.js';

const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  const out = optString(a, 'out');
  const path = out ? resolve(ctx.cwd, out) : defaultKeyFile(ctx.cwd);
  const key = generateAppKey();
  writeSecretFile(path, appKeyFileText(key));
  ctx.stderr(`wrote ${path} (keep it private: the secret key authorizes new app binaries)\n`);
  ctx.stdout(`${Buffer.from(key.vk).toString('hex')}\n`);
};
export default run;
