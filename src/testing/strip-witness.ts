/**
 * A witness-stripping node (issue 31): the block with the witnesses of some transactions removed
 * and re-serialised, header and transaction count kept. Txids, hence the merkle root and the
 * block hash, stay the same; only the witness commitment (BIP141) tells the stripped block apart.
 */
import { parseBlock, blockTxRaw } from '../bitcoin/block.js';
import { parseTx, serializeTx } from '../bitcoin/tx.js';
import { ByteWriter } from '../util/byte-io.js';

/** `bytes` (a valid block) with the witnesses of the transactions `strip(i)` selects removed. */
export function stripWitnesses(bytes: Uint8Array, strip: (index: number) => boolean): Uint8Array {
  const b = parseBlock(bytes);
  const n = b.offsets.length - 1;
  const w = new ByteWriter();
  w.bytes(bytes.subarray(0, b.offsets[0]!)); // header and transaction count, unchanged
  for (let i = 0; i < n; i++) {
    const raw = blockTxRaw(b, i);
    if (!strip(i)) {
      w.bytes(raw);
      continue;
    }
    const tx = parseTx(raw);
    for (const input of tx.inputs) input.witness = [];
    w.bytes(serializeTx(tx));
  }
  return w.finish();
}
