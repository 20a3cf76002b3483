/**
 * A list of names taken from a fixed set, each at most once (`hide: [user_prompts, tool_inputs]`).
 * Every error at the item's exact path; absent or null is the empty list.
 */
import { ConfigError } from '../util/errors.js';
import { join, strList } from './reader.js';

/** `what` completes "<name> is not …": such as `a category that can be withheld`. */
export function distinctNames<T extends string>(v: unknown, path: string, allowed: readonly T[], what: string): T[] {
  const seen = new Set<string>();
  return strList(v, path, []).map((name, i) => {
    if (!(allowed as readonly string[]).includes(name)) throw new ConfigError(join(path, i), `"${name}" is not ${what}; one of ${allowed.join(', ')}`);
    if (seen.has(name)) throw new ConfigError(join(path, i), `"${name}" is listed twice`);
    seen.add(name);
    return name as T;
  });
}
