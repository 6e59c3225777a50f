import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Run } from '../define.js';
import type { appSignOptions } from '../options.js';
import { lines } from '../output.js';
import { defaultKeyFile, readFileBytes, readFileText } from '../io.js';
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

const run: Run<typeof appSignOptions> = async ({ opts }, ctx) => {
  const keyPath = opts.key ? resolve(ctx.cwd, opts.key) : defaultKeyFile(ctx.cwd);
  const key = parseAppKeyFile(readFileText(keyPath, 'app key file'), keyPath);
  const wasmPath = await resolveBinary(opts.bin, ctx.cwd, ctx.stderr);
  const sig = signBinary(key, readFileBytes(wasmPath, 'app binary'));
  const out = opts.out ? resolve(ctx.cwd, opts.out) : `${wasmPath}.sig.yaml`;
  const text = /\.ya?ml$/.test(out) ? toYaml(new ValueMap([[toHex(key.vk), appSignatureToValue(sig, true)]])) : toJsonPretty(appSignatureToValue(sig, true));
  writeOutputFile(out, text);
  return lines(out);
};
export default run;
