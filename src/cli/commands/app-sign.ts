import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { CommandDef } from '../define.js';
import { defaultKeyFile, optString, readFileBytes, readFileText } from '../io.js';
import { parseAppKeyFile, signBinary } from '../../keys/app-key.js';
import { appSignatureToValue } from '../../model/spell.js';
import { ValueMap } from '../../codec/value.js';
import { toYaml } from '../../codec/yaml.js';
import { toJsonPretty } from '../../codec/json.js';
import { toHex } from '../../util/bytes.js';
import { buildApp, releaseWasmPath } from '../../app/project.js';
import { writeOutputFile } from '../../keys/key-file.js';

/** The binary to sign/verify: `--bin`, else the release build output (built if missing). */
export async function resolveBinary(bin: string | undefined, cwd: string, log: (s: string) => void): Promise<string> {
  if (bin) return resolve(cwd, bin);
  const wasm = releaseWasmPath(cwd);
  return existsSync(wasm) ? wasm : buildApp(cwd, log);
}

const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  const keyPath = optString(a, 'key') ? resolve(ctx.cwd, optString(a, 'key')!) : defaultKeyFile(ctx.cwd);
  const key = parseAppKeyFile(readFileText(keyPath, 'app key file'), keyPath);
  const wasmPath = await resolveBinary(optString(a, 'bin'), ctx.cwd, ctx.stderr);
  const sig = signBinary(key, readFileBytes(wasmPath, 'app binary'));
  const out = optString(a, 'out') ? resolve(ctx.cwd, optString(a, 'out')!) : `${wasmPath}.sig.yaml`;
  const text = /\.ya?ml$/.test(out) ? toYaml(new ValueMap([[toHex(key.vk), appSignatureToValue(sig, true)]])) : toJsonPretty(appSignatureToValue(sig, true));
  writeOutputFile(out, text);
  ctx.stdout(`${out}\n`);
};
export default run;
