/**
 * A value made on first use and kept: for immutable data that is costly to build (the OTLP
 * proto root, this package's version) and that a run may never need. If `make` throws, nothing
 * is kept and the next call tries again.
 */
export function lazy<T>(make: () => T): () => T {
  let made = false;
  let value: T | undefined;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value as T;
  };
}
