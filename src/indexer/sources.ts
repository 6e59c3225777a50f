/**
 * The BlockSource `charms index` follows, from the source settings (RPC or Esplora).
 * Placeholder until the real RPC/Esplora block sources land (branch nodesrc).
 */
import { CharmsError } from '../errors.js';
import type { SourceConfig } from '../settings/settings.js';
import type { BlockSource } from '../sources/block-source.js';

export function blockSourceFromConfig(c: SourceConfig): BlockSource | undefined {
  if (!c.rpcUrl && !c.esploraUrl) return undefined;
  throw new CharmsError('UNSUPPORTED', 'following a node needs the RPC/Esplora block sources, which this build lacks');
}
