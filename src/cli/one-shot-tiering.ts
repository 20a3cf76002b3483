/**
 * How soon V8 optimizes a function, for a command that parses a whole root once and exits. A first
 * parse runs the assembler's many stages over hundreds of small sessions on two threads, and V8's
 * default budget has each thread optimize them all: on a 1,104-session history, optimizing took
 * about 40 % of the parse's CPU and the parse 2.7-3.2 s. A budget about fifteen times the default
 * leaves the code that runs for a while optimized and the rest not: 1.7-1.8 s, and one 100 MB
 * session no slower. Set before the parse threads start (they read it as they begin); a long-running
 * service keeps V8's default.
 */
import { setFlagsFromString } from 'node:v8';

/** V8's default (`--interrupt-budget`) is 67,584: the bytecode a function runs between looks at whether to optimize it. */
const ONE_SHOT_INTERRUPT_BUDGET = 1_000_000;

export function tierForOneShotParse(): void {
  setFlagsFromString(`--interrupt-budget=${ONE_SHOT_INTERRUPT_BUDGET}`);
}
