/**
 * Rows grouped by an id's code (storage/string-codes.ts), and a map from code to code: what
 * row-groups.ts does by text, with typed arrays indexed by the code in place of hash maps. Stage 9
 * keys tens of thousands of request ids this way; a map operation costs about a microsecond here.
 */

/** A slot per code, grown as larger codes come; holds a number ≥ 0, or -1 for none. */
export class CodeMap {
  private slots: Int32Array;
  constructor(size: number) {
    this.slots = new Int32Array(size);
  }
  get(code: number): number {
    return code >= 0 && code < this.slots.length ? this.slots[code]! - 1 : -1;
  }
  has(code: number): boolean {
    return this.get(code) >= 0;
  }
  set(code: number, value: number): void {
    if (code >= this.slots.length) {
      const grown = new Int32Array(Math.max(code + 1, this.slots.length * 2));
      grown.set(this.slots);
      this.slots = grown;
    }
    this.slots[code] = value + 1; // 0 is the empty slot, so a new array needs no fill
  }
}

export class CodeGroups {
  private readonly firstOf: CodeMap;
  private readonly order: number[] = [];
  private readonly next: Int32Array;
  private readonly last: Int32Array;

  /** `capacity`: rows are numbered below it; `codes`: the codes expected (the map grows past it). */
  constructor(capacity: number, codes: number) {
    this.firstOf = new CodeMap(codes);
    this.next = new Int32Array(capacity).fill(-1);
    this.last = new Int32Array(capacity);
  }

  /** Adds `row` (added in increasing order) to the group of `code`; a row with no code (-1) joins none. */
  add(code: number, row: number): void {
    if (code < 0) return;
    const first = this.firstOf.get(code);
    if (first < 0) {
      this.firstOf.set(code, row);
      this.order.push(code);
      this.last[row] = row;
    } else {
      this.next[this.last[first]!] = row;
      this.last[first] = row;
    }
  }
  /** The group's first row, or -1; walk on with `after`. */
  first(code: number): number {
    return this.firstOf.get(code);
  }
  after(row: number): number {
    return this.next[row]!;
  }
  /** Every code, in the order first seen. */
  keys(): readonly number[] {
    return this.order;
  }
  rows(code: number): number[] {
    const out: number[] = [];
    for (let r = this.first(code); r >= 0; r = this.next[r]!) out.push(r);
    return out;
  }
}
