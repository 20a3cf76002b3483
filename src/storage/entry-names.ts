/**
 * The one rule for a name that comes from outside (a session id, an agent id, a workflow name)
 * and becomes a directory under the storage root, and the names the root keeps for itself: its
 * writers take their top-level names from `ROOT_NAMES`, so a new one is refused as a session id
 * the day it is added.
 */

/** Every name the storage root uses at its top level beside the session directories. */
export const ROOT_NAMES = {
  pushState: 'push.state',
  pushStateLock: '.push.state.lock',
  conversations: '_conversations',
  metrics: '_metrics',
  journal: '_journal',
  hooks: '_hooks',
} as const;

/** A session directory's own state file: refused as a name too, so no tool looking for it can meet a directory. */
export const SESSION_STATE = 'session.state';

/**
 * The version of this rule, stamped on every journal entry the OTLP receiver writes: an item
 * whose session id the rule refuses was answered as rejected only if its entry carries the current
 * version; one from an older entry may have been accepted, so it is quarantined, never dropped.
 * Raise it whenever the rule refuses a name it accepted before.
 */
export const NAMES_RULE_VERSION = 1;

/** Matched ignoring case: on a case-insensitive filesystem `PUSH.STATE` is the same entry as `push.state`. */
const RESERVED = new Set<string>([...Object.values(ROOT_NAMES), SESSION_STATE].map((n) => n.toLowerCase()));

/**
 * The longest name accepted, in UTF-8 bytes. Common filesystems (ext4, XFS, Btrfs, ZFS, APFS)
 * allow 255 bytes per path component, and the longest component aszcol builds from a session id
 * is a derived spool file's temporary name, `.tmp-metrics-<stamp>-<seq>-<session>-derived.pb-<pid>-<hex>`:
 * about 78 bytes around the id. 160 leaves that room and some to spare; Claude Code's ids are 36.
 */
export const MAX_NAME_BYTES = 160;

/** Printable ASCII that needs none of the checks below beyond the reserved names and the first character. */
const PLAIN_ASCII = /^[\x20-\x7e]*$/;
const SEPARATOR = /[/\\]/;
const CONTROL = /\p{Cc}/u;
const LONE_SURROGATE = /\p{Cs}/u;

/** Whether a top-level name of the root is one of the root's own (a dot name, an `_` directory, a reserved name), not a session. */
export function isRootOwnName(name: string): boolean {
  return name.startsWith('.') || name.startsWith('_') || RESERVED.has(name.toLowerCase());
}

const codePoint = (c: string) => 'U+' + c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');

/**
 * Why `name` cannot name an entry under the storage root; undefined when it can. Names are kept
 * byte-exact, never case-folded or normalised: a name that would need it is refused instead.
 */
export function entryNameProblem(name: string): string | undefined {
  if (name === '') return 'empty';
  const plain = PLAIN_ASCII.test(name);
  const bytes = plain ? name.length : Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_NAME_BYTES) return `${bytes} bytes in UTF-8, more than the ${MAX_NAME_BYTES} a name may have`;
  if (SEPARATOR.test(name)) return 'contains a path separator ("/" or "\\")';
  if (name === '.' || name === '..') return 'a relative directory name ("." or "..")';
  if (name.startsWith('.')) return 'starts with ".", which the storage root keeps for its own files';
  if (name.startsWith('_')) return 'starts with "_", which the storage root keeps for its own directories';
  if (RESERVED.has(name.toLowerCase())) return `"${name}" is a name the storage root uses itself`;
  if (plain) return undefined;
  const control = CONTROL.exec(name);
  if (control) return `contains the control character ${codePoint(control[0])}`;
  if (LONE_SURROGATE.test(name)) return 'contains a lone UTF-16 surrogate, which no UTF-8 file name can hold';
  // Two spellings of one text (é as one code point or as e + U+0301) would be one directory on a
  // normalising filesystem (APFS, HFS+) and two on others: only the composed form (NFC) is taken.
  if (name.normalize('NFC') !== name) return 'not in Unicode normalisation form NFC (the same text can be spelt with other code points)';
  return undefined;
}
