/**
 * A loaded index numbers every string once (its string table): within one table, equal numbers
 * are equal strings. A join over tens of thousands of ids can then index arrays by number instead
 * of hashing text into maps (bench:assemble: a map operation on this machine costs about a
 * microsecond, an array slot a few nanoseconds). Entries built in memory have no table.
 */
export interface StringCoded {
  readonly strings: readonly (string | undefined)[];
  /** The number of the record's call id or record id in `strings`, or -1. */
  code(field: 'call' | 'id'): number;
  /** The number of the id of the record's `index`-th part, or -1. */
  partIdCode(index: number): number;
}

/** The record's string numbering, when it was read from a loaded index. */
export const stringCodedOf = (e: object): StringCoded | undefined => ('partIdCode' in e ? (e as StringCoded) : undefined);

/**
 * One numbering for the ids of one join: the loaded index's, when every record it reads shares one
 * table (`sharedStringTable`), else its own, given as strings are first met. Codes start at 0.
 */
export class IdCodes {
  private readonly numbered = new Map<string, number>();
  private readonly texts: string[] = [];
  constructor(private readonly table: readonly (string | undefined)[] | undefined) {}

  /** The code of `text`; `known` is its number in the shared table when the caller read one (-1 otherwise). */
  of(text: string, known: number): number {
    if (this.table) return known >= 0 ? known : this.ownCode(text);
    return this.ownCode(text);
  }
  /** The loaded index's string table the codes below its length are numbers of, if any. */
  get sharedTable(): readonly (string | undefined)[] | undefined {
    return this.table;
  }
  /** The text a code stands for. */
  text(code: number): string {
    return this.table ? (code < this.table.length ? this.table[code]! : this.texts[code - this.table.length]!) : this.texts[code]!;
  }
  /** How many codes there may be so far: arrays indexed by code are made this long. */
  get size(): number {
    return (this.table?.length ?? 0) + this.texts.length;
  }
  /** A string the shared table does not hold (or every string, without one) is numbered after it. */
  private ownCode(text: string): number {
    let code = this.numbered.get(text);
    if (code === undefined) {
      code = (this.table?.length ?? 0) + this.texts.length;
      this.numbered.set(text, code);
      this.texts.push(text);
    }
    return code;
  }
}

/** The string table every given record was read with, or undefined when any was built in memory or read from another. */
export function sharedStringTable(records: Iterable<object>): readonly (string | undefined)[] | undefined {
  let table: readonly (string | undefined)[] | undefined;
  for (const e of records) {
    const coded = stringCodedOf(e);
    if (!coded) return undefined;
    const strings = coded.strings;
    if (table === undefined) table = strings;
    else if (strings !== table) return undefined;
  }
  return table;
}
