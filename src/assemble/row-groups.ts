/**
 * Rows of a table grouped by a key, each group in row order, kept as one chain through the rows
 * instead of an array per key: tens of thousands of groups cost one map and two integer arrays. Keys iterate in the order they were first seen.
 */
export class RowGroups {
  private readonly firstOf = new Map<string, number>();
  private readonly next: Int32Array;
  /** The last row of the group a first row starts. */
  private readonly last: Int32Array;

  /** `capacity`: rows are numbered below it. */
  constructor(capacity: number) {
    this.next = new Int32Array(capacity).fill(-1);
    this.last = new Int32Array(capacity);
  }

  /** The key of the group the last row joined, and that group's first row: rows of one key often come together. */
  private lastKey: string | undefined;
  private lastFirst = -1;

  /** Adds `row` (added in increasing order) to the group of `key`; a row with no key joins none. */
  add(key: string | undefined, row: number): void {
    if (key === undefined) return;
    const first = key === this.lastKey ? this.lastFirst : this.firstOf.get(key);
    if (first === undefined) {
      this.firstOf.set(key, row);
      this.start(row);
    } else this.append(first, row);
    this.lastKey = key;
    this.lastFirst = first ?? row;
  }

  /**
   * Starts a group at `row` that the caller finds by its own means (an object it already holds),
   * with no key: the join saves a lookup in a large map per row. Rows are added with `append`.
   */
  start(row: number): void {
    this.last[row] = row;
  }
  /** Adds `row` to the group whose first row is `first`. */
  append(first: number, row: number): void {
    this.next[this.last[first]!] = row;
    this.last[first] = row;
  }

  /** The group's first row, or -1; walk on with `after`. */
  first(key: string | undefined): number {
    return key === undefined ? -1 : (this.firstOf.get(key) ?? -1);
  }
  /** The row after `row` in its group, or -1. */
  after(row: number): number {
    return this.next[row]!;
  }
  has(key: string): boolean {
    return this.firstOf.has(key);
  }
  /** Every key, in the order first seen. */
  keys(): IterableIterator<string> {
    return this.firstOf.keys();
  }
  /** A group's rows as an array (for the few places that want one). */
  rows(key: string): number[] {
    const out: number[] = [];
    for (let r = this.first(key); r >= 0; r = this.next[r]!) out.push(r);
    return out;
  }
}
