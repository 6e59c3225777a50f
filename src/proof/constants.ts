/** Which protocol constant applies to which spell version. */
import { CharmsError } from '../errors.js';
import { fromHex } from '../util/bytes.js';
import { GROTH16_VKS_HEX, MOCK_SPELL_VK_HEX, SPELL_VKS_HEX, VK_ROOT_V12_HEX, VK_ROOT_V14_HEX } from './keys-data.js';

export const CURRENT_PROTOCOL_VERSION = 15;
export const MOCK_SPELL_VK = fromHex(MOCK_SPELL_VK_HEX);

/** The spell vk a spell of `version` commits to (the mock vk for mock spells). */
export function spellVkFor(version: number, mock: boolean): Uint8Array {
  if (!Number.isInteger(version) || version < 0 || version > CURRENT_PROTOCOL_VERSION)
    throw new CharmsError('UNSUPPORTED', `unsupported spell version: ${version}`);
  return mock ? MOCK_SPELL_VK : fromHex(SPELL_VKS_HEX[version]!);
}

export type Groth16KeyName = keyof typeof GROTH16_VKS_HEX;

/** The SP1 Groth16 verifying key file a real proof of `version` was made against. */
export function groth16KeyFor(version: number): Groth16KeyName {
  if (version === 0) return 'v0';
  if (version <= 3) return 'v1';
  if (version <= 11) return 'v4';
  if (version <= 13) return 'v12';
  if (version <= CURRENT_PROTOCOL_VERSION) return 'v14';
  throw new CharmsError('UNSUPPORTED', `unsupported spell version: ${version}`);
}

/** SP1 v6 proof shape (exit code, vk root, nonce) from protocol 12 on; the vk root it pins. */
export function vkRootFor(version: number): Uint8Array | undefined {
  if (version < 12) return undefined;
  return fromHex(version <= 13 ? VK_ROOT_V12_HEX : VK_ROOT_V14_HEX);
}
