/**
 * The telemetry join keeps its compiled code from one assembly to the next (assemble/kept-shapes.ts).
 * Without the kept instances, a full collection between two assemblies took the join classes'
 * object shapes with it, and V8 threw away the code compiled for their methods ("weak objects"
 * in its deoptimization trace), so every assembly in a long-lived worker ran the join slowly and
 * compiled it again. Read from V8's own trace, not from a clock.
 */
import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ObservationTable } from '../../src/adapters/claude-code/observation-table.js';
import { CodeGroups, CodeMap } from '../../src/assemble/code-groups.js';
import { KEPT_SHAPES } from '../../src/assemble/kept-shapes.js';
import { RowGroups } from '../../src/assemble/row-groups.js';
import { IdCodes } from '../../src/storage/string-codes.js';
import { IsoTimes } from '../../src/util/iso-time.js';

const JOIN_CLASSES = [ObservationTable, IdCodes, CodeGroups, CodeMap, RowGroups, IsoTimes];

describe('the join classes keep their compiled code across assemblies', () => {
  test('no method of theirs is thrown away after the first of three assemblies with full collections between', () => {
    const methods = new Set(JOIN_CLASSES.flatMap((c) => Object.getOwnPropertyNames(c.prototype)).filter((m) => m !== 'constructor'));
    const child = fileURLToPath(new URL('../helpers/join-deopt-child.js', import.meta.url));
    const run = spawnSync(process.execPath, ['--expose-gc', '--trace-deopt', child], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    expect(run.status).toBe(0);
    let assembly = -1;
    const dropped: string[] = [];
    for (const line of run.stdout.split('\n')) {
      const started = /^RUN (\d+)$/.exec(line);
      if (started) assembly = Number(started[1]);
      const dependent = /SharedFunctionInfo ([\w$]+)>.*reason: weak objects/.exec(line);
      if (assembly >= 1 && dependent && methods.has(dependent[1]!)) dropped.push(`${dependent[1]} (assembly ${assembly})`);
    }
    expect(assembly).toBe(2);
    expect(dropped).toEqual([]);
  });

  test('the kept instances are frozen and empty: they hold no data and nothing can write to them', () => {
    expect(KEPT_SHAPES.map((o) => o.constructor)).toEqual(JOIN_CLASSES);
    for (const o of KEPT_SHAPES) expect(Object.isFrozen(o)).toBe(true);
    expect((KEPT_SHAPES[0] as ObservationTable).length).toBe(0);
    expect(() => new CodeMap(0).set(0, 1)).not.toThrow();
    expect(() => (KEPT_SHAPES[3] as CodeMap).set(5, 1)).toThrow(TypeError);
  });
});
