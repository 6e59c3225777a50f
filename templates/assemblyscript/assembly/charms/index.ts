// The Charms app SDK for AssemblyScript: decode the app input and run a contract.
//
//   import { App, Transaction, Data, run } from "./charms";
//   export function _start(): void { run(contract); }

import { CborReader } from "./cbor";
import { App, Data, Kind, Transaction } from "./data";
import { eprintln, readStdin } from "./wasi";

export * from "./data";
export { sha256 } from "./sha256";
export { eprintln } from "./wasi";

export type Contract = (app: App, tx: Transaction, x: Data, w: Data) => bool;

/**
 * Reads `(app, tx, x, w)` from stdin and runs the contract. The app accepts the transaction by
 * returning from `_start`; a `false` from the contract traps, which the runner reports as a
 * rejection (with the stderr lines the contract printed).
 */
export function run(contract: Contract): void {
  const input = new CborReader(readStdin()).read();
  if (input.kind != Kind.Array || input.items.length != 4) {
    eprintln("app input: expected (app, tx, x, w)");
    unreachable();
  }
  const app = App.fromData(input.items[0]);
  const tx = Transaction.fromData(input.items[1]);
  if (!contract(app, tx, input.items[2], input.items[3])) {
    eprintln("app contract rejected the transaction: " + app.toString());
    unreachable();
  }
}

/** Prints `condition does not hold: <what>` to stderr when `cond` is false; returns `cond`. */
export function check(cond: bool, what: string): bool {
  if (!cond) eprintln("condition does not hold: " + what);
  return cond;
}
