/**
 * Holds a database's SQL calls while dumps are being read. Any number of holders may hold at
 * once; waiters go on when the last one lets go.
 */
export class WriteHold {
  #holders = 0;
  #waiters: Array<() => void> = [];

  /** Takes the hold; the returned function lets go of it and is safe to call more than once. */
  acquire(): () => void {
    this.#holders++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#holders--;
      if (this.#holders === 0) for (const wake of this.#waiters.splice(0)) wake();
    };
  }

  /** Resolves once nobody holds it. */
  async wait(): Promise<void> {
    while (this.#holders > 0) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }
}
