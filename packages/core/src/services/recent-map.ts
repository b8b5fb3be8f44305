/**
 * A map that keeps its most recently set entries, at most `max` of them: setting a key makes it the
 * newest, and past the bound the oldest is dropped. For what a process remembers to save a read or to
 * hand on an object, where a dropped entry is found again another way. @internal
 */
export class RecentMap<K, V> {
  readonly #entries = new Map<K, V>();

  constructor(readonly max: number) {}

  get(key: K): V | undefined {
    return this.#entries.get(key);
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.max) {
      const oldest = this.#entries.keys().next().value as K;
      this.#entries.delete(oldest);
    }
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }
}
