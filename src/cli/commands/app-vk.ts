import { CharmsError } from '../../errors.js';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Run } from '../define.js';
import type { appVkArgs, appVkOptions } from '../options.js';
import { lines } from '../output.js';
import { defaultKeyFile, readFileBytes, readFileText } from '../io.js';
import { toHex } from '../../util/bytes.js';
import { parsePublicKeyFile, vkOfBinary, vkOfPublicKey, parseAppKeyFile } from '../../keys/app-key.js';
import { buildApp } from '../../app/project.js';

const run: Run<typeof appVkOptions, typeof appVkArgs> = async (a, ctx) => {
  const path = a.args.PATH;
  const pubkey = a.opts.pubkey;
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
  return lines(toHex(vk));
};
export default run;
