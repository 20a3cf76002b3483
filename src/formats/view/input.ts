/** What the view builder is given: the folded chain, rounds, files and a reader of landed records. */
import type { Fold } from '../session-flow/fold.js';
import type { SdRecord } from '../session-data/types.js';
import type { ViewFile, ViewRound, ViewState } from './types.js';

/** Landed records by address. The builder never opens a file. */
export interface RecordReader {
  record(seq: number, row: number): SdRecord | undefined;
  /** The stream or run the file with this sequence was filed under: position orders only inside one. */
  lane(seq: number): string;
  /** A provider body whose record names earlier ones (`piece`, `copy`), rebuilt from its session's files; throws saying why not. */
  providerBody?(seq: number, row: number): Buffer;
}

export interface ViewInput {
  conversation: string;
  /** The chain as far as it folds. */
  fold: Fold;
  rounds: ViewRound[];
  files: ViewFile[];
  /** What verification found, one line each; `state` says how bad. */
  problems: string[];
  state: ViewState;
  records: RecordReader;
  /** Landed records filed under each stream, by stream name. */
  recordsByStream?: Map<string, number>;
}
