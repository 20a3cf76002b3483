/**
 * Rows of a table grouped by a key, each group in row order, kept as one chain through the rows
 * instead of an array per key: tens of thousands of groups cost one map and two integer arrays. Keys iterate in the order they were first seen.
 */
export class RowGroups {
  private readonly firstOf = new Map<string, number>();
  /** Made by the first row added: most of a join's groupings stay empty (no prompt ids, no waits for the user). */
  private next: Int32Array | undefined;
  /** The last row of the group a first row starts. */
  private last: Int32Array | undefined;

  /** `capacity`: rows are numbered below it. */
  constructor(private readonly capacity: number) {}

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
    (this.last ??= new Int32Array(this.capacity))[row] = row;
    this.next ??= new Int32Array(this.capacity).fill(-1);
  }
  /** Adds `row` to the group whose first row is `first` (started with `start` or `add`). */
  append(first: number, row: number): void {
    this.next![this.last![first]!] = row;
    this.last![first] = row;
  }

  /** The group's first row, or -1; walk on with `after`. */
  first(key: string | undefined): number {
    return key === undefined ? -1 : (this.firstOf.get(key) ?? -1);
  }
  /** The row after `row` in its group, or -1. */
  after(row: number): number {
    return this.next ? this.next[row]! : -1;
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
    for (let r = this.first(key); r >= 0; r = this.after(r)) out.push(r);
    return out;
  }
}
