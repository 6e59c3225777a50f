/** charms-ts/checker: the spell checker (the protocol's correctness rules and app contract runs). */
export { checkSpell, type CheckArgs, type CheckResult } from './check.js';
