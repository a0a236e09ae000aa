/**
 * A bounded per-isolate memory of values found by a lookup, each kept until its own moment.
 * Past its bound the oldest entry is dropped first. Time is the caller's: an argument, so the
 * rule that decides a value's life stays in one place and tests can move it.
 */
export class TtlCache<V> {
  readonly #entries = new Map<string, { value: V; until: number }>();

  constructor(readonly bound: number) {}

  /** The value kept for `key`, if its moment has not come at `now`; `undefined` otherwise. */
  get(key: string, now: number): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (now < entry.until) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  /** Keeps `value` for `key` until `until` (same clock as `get`'s `now`). */
  set(key: string, value: V, until: number): void {
    this.#entries.delete(key);
    if (this.#entries.size >= this.bound) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, { value, until });
  }

  /** Forgets `key`. */
  delete(key: string): void {
    this.#entries.delete(key);
  }

  /** Forgets every key that `matches`. */
  forget(matches: (key: string) => boolean): void {
    for (const key of [...this.#entries.keys()]) if (matches(key)) this.#entries.delete(key);
  }
}
