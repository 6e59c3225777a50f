import type { CommandDef } from '../define.js';
import { optString, readFileBytes, readFileText } from '../io.js';
import { resolveBinary } from './app-sign.js';
import { checkAppSignature, vkOfPublicKey } from '../../keys/app-key.js';
import { appSignatureFromValue, b32MapFromValue } from '../../model/spell.js';
import { parseYaml } from '../../codec/yaml.js';
import { toHex } from '../../util/bytes.js';
import { resolve } from 'node:path';
import { CharmsError } from '../../errors.js';

const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  const wasmPath = await resolveBinary(optString(a, 'bin'), ctx.cwd, ctx.stderr);
  const wasm = readFileBytes(wasmPath, 'app binary');
  const sigPath = optString(a, 'sig') ? resolve(ctx.cwd, optString(a, 'sig')!) : `${wasmPath}.sig.yaml`;
  const doc = parseYaml(readFileText(sigPath, 'signature file'));
  const entries = sigPath.endsWith('.json')
    ? (() => {
        const s = appSignatureFromValue(doc, true, 'signature');
        return [[vkOfPublicKey(s.public_key), s] as const];
      })()
    : b32MapFromValue(doc, true, 'signatures', (v, p) => appSignatureFromValue(v, true, p));
  if (entries.length === 0) throw new CharmsError('INVALID_INPUT', `${sigPath}: no signatures`);
  for (const [vk, sig] of entries) {
    checkAppSignature(vk, sig, wasm);
    ctx.stdout(`${toHex(vk)}: OK\n`);
  }
};
export default run;
