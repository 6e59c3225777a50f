import { CharmsError } from '../../errors.js';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { CommandDef } from '../define.js';
import { defaultKeyFile, optString, readFileBytes, readFileText } from '../io.js';
import { toHex } from '../../util/bytes.js';
import { parsePublicKeyFile, vkOfBinary, vkOfPublicKey, parseAppKeyFile } from '../../keys/app-key.js';
import { buildApp } from '../../app/project.js';

const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  const path = a.args[0];
  const pubkey = optString(a, 'pubkey');
  let vk: Uint8Array;
  if (path && pubkey) throw new CharmsError('INVALID_INPUT', 'give either PATH or --pubkey, not both');
  if (path) vk = vkOfBinary(readFileBytes(resolve(ctx.cwd, path), 'app binary'));
  else if (pubkey) vk = vkOfPublicKey(parsePublicKeyFile(readFileText(resolve(ctx.cwd, pubkey), 'public key file')));
  else {
    const keyFile = defaultKeyFile(ctx.cwd);
    if (existsSync(keyFile)) vk = parseAppKeyFile(readFileText(keyFile, 'app key file'), keyFile).vk;
    else {
      const wasm = await buildApp(ctx.cwd, (s) => ctx.stderr(s));
      vk = vkOfBinary(readFileBytes(wasm, 'app binary'));
    }
  }
  ctx.stdout(`${toHex(vk)}\n`);
};
export default run;
