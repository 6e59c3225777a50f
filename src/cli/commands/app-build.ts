import type { Run } from '../define.js';
import { lines } from '../output.js';
import { existsSync } from 'node:fs';
import { buildApp } from '../../app/project.js';
import { defaultKeyFile, readFileBytes, readFileText } from '../io.js';
import { parseAppKeyFile, signBinary } from '../../keys/app-key.js';
import { ValueMap } from '../../codec/value.js';
import { toYaml } from '../../codec/yaml.js';
import { appSignatureToValue } from '../../model/spell.js';
import { toHex } from '../../util/bytes.js';
import { writeOutputFile } from '../../keys/key-file.js';

/** Builds the app; prints the .wasm path; signs it when the project has an app key. */
const run: Run = async (_a, ctx) => {
  const wasm = await buildApp(ctx.cwd, ctx.stderr);
  const keyFile = defaultKeyFile(ctx.cwd);
  if (existsSync(keyFile)) {
    const key = parseAppKeyFile(readFileText(keyFile, 'app key file'), keyFile);
    const sig = signBinary(key, readFileBytes(wasm, 'app binary'));
    writeOutputFile(`${wasm}.sig.yaml`, toYaml(new ValueMap([[toHex(key.vk), appSignatureToValue(sig, true)]])));
    ctx.stderr(`signed: ${wasm}.sig.yaml\n`);
  }
  return lines(wasm);
};
export default run;
