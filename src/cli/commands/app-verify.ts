import type { Run } from '../define.js';
import type { appVerifyOptions } from '../options.js';
import { lines } from '../output.js';
import { readFileBytes, readFileText } from '../io.js';
import { resolveBinary } from './app-sign.js';
import { checkAppSignature, vkOfPublicKey } from '../../keys/app-key.js';
import { appSignatureFromValue, b32MapFromValue } from '../../model/spell.js';
import { parseYaml } from '../../codec/yaml.js';
import { toHex } from '../../util/bytes.js';
import { resolve } from 'node:path';
import { CharmsError } from '../../errors.js';

const run: Run<typeof appVerifyOptions> = async ({ opts }, ctx) => {
  const wasmPath = await resolveBinary(opts.bin, ctx.cwd, ctx.stderr);
  const wasm = readFileBytes(wasmPath, 'app binary');
  const sigPath = opts.sig ? resolve(ctx.cwd, opts.sig) : `${wasmPath}.sig.yaml`;
  const doc = parseYaml(readFileText(sigPath, 'signature file'));
  const entries = sigPath.endsWith('.json')
    ? (() => {
        const s = appSignatureFromValue(doc, true, 'signature');
        return [[vkOfPublicKey(s.public_key), s] as const];
      })()
    : b32MapFromValue(doc, true, 'signatures', (v, p) => appSignatureFromValue(v, true, p));
  if (entries.length === 0) throw new CharmsError('INVALID_INPUT', `${sigPath}: no signatures`);
  // every signature is checked before anything is printed: a bad one fails the command with no OK lines
  for (const [vk, sig] of entries) checkAppSignature(vk, sig, wasm);
  return lines(...entries.map(([vk]) => `${toHex(vk)}: OK`));
};
export default run;
