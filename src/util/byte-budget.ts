/**
 * A count of bytes held in memory against a maximum, shared by everything it bounds: request
 * bodies of a server (infra/http.ts), proof downloads of the process (prover/network).
 */
export class ByteBudget {
  private used = 0;
  constructor(readonly max: number) {}
  tryTake(n: number): boolean {
    if (this.used + n > this.max) return false;
    this.used += n;
    return true;
  }
  give(n: number): void {
    this.used -= n;
  }
  get inUse(): number {
    return this.used;
  }
}
