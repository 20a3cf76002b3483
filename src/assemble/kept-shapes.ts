/**
 * One empty, frozen instance of each class stage 9 makes per assembly, held for the life of the
 * process. V8 keeps an object shape only while some object has it, and throws away the machine code
 * compiled for a shape that dies: every assembly's join objects die together, so each next
 * assembly ran the join's methods unoptimized and compiled them all again (bench:assemble: 10 to 30
 * deoptimizations per assembly, none with these held). Frozen and empty, they hold no data and
 * nothing can write to them; a frozen object's shape keeps the shape it was frozen from.
 */
import { ObservationTable } from '../adapters/claude-code/observation-table.js';
import { IdCodes } from '../storage/string-codes.js';
import { IsoTimes } from '../util/iso-time.js';
import { CodeGroups, CodeMap } from './code-groups.js';
import { RowGroups } from './row-groups.js';

export const KEPT_SHAPES: readonly object[] = Object.freeze(
  [new ObservationTable(0, new IdCodes(undefined)), new IdCodes(undefined), new CodeGroups(0, 0), new CodeMap(0), new RowGroups(0), new IsoTimes()].map((o) =>
    Object.freeze(o),
  ),
);
