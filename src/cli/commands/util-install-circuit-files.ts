import type { CommandDef } from '../define.js';
import { CharmsError } from '../../errors.js';

/** The reference downloads SP1's Groth16 circuit artifacts for local proving; this build does not prove with SP1 locally. */
const run: NonNullable<CommandDef['run']> = async () => {
  throw new CharmsError(
    'UNSUPPORTED',
    'local SP1 Groth16 proving is not available in this build, so there are no circuit files to install',
  );
};
export default run;
