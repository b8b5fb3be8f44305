/** A deep copy, so callers never share an object with the store. @internal */
export function copy<T>(value: T): T {
  return structuredClone(value);
}
