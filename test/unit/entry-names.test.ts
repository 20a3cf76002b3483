import { describe, expect, test } from '@jest/globals';
import { MAX_NAME_BYTES, ROOT_NAMES, SESSION_STATE, entryNameProblem, isRootOwnName } from '../../src/storage/entry-names.js';
import { isSessionEntryName } from '../../src/storage/layout.js';

describe('the one rule for a name from outside that becomes a directory under the storage root', () => {
  test('real ids pass: UUIDs in either case, agent ids, workflow runs, composed non-ASCII text', () => {
    for (const ok of [
      'e29b7cdd-32c6-4521-907b-30ef9a1399f6',
      'E29B7CDD-32C6-4521-907B-30EF9A1399F6',
      'a0123456789abcdef',
      'agent-a1b2c3',
      'wf_afa31e47-f6c',
      'S-http',
      'a b',
      'café',
      '会话-1',
      '😀',
      'x'.repeat(MAX_NAME_BYTES),
      'é'.repeat(MAX_NAME_BYTES / 2),
      'push.state.old',
      '-',
    ])
      expect([ok, entryNameProblem(ok)]).toEqual([ok, undefined]);
  });

  test.each([
    ['empty', '', /^empty$/],
    ['too many UTF-8 bytes though few characters', 'é'.repeat(128), /^256 bytes in UTF-8, more than the 160 a name may have$/],
    ['too many ASCII bytes', 'x'.repeat(MAX_NAME_BYTES + 1), /^161 bytes in UTF-8/],
    ['one byte over in a 4-byte character', 'x'.repeat(MAX_NAME_BYTES - 3) + '😀', /^161 bytes in UTF-8/],
    ['a slash', 'a/b', /path separator/],
    ['a backslash', 'a\\b', /path separator/],
    ['a traversal', '../escape', /path separator/],
    ['dot', '.', /relative directory name/],
    ['dot dot', '..', /relative directory name/],
    ['a dot name', '.lock', /starts with "\."/],
    ['an underscore name', '_quarantine', /starts with "_"/],
    ['push.state', 'push.state', /"push.state" is a name the storage root uses itself/],
    ['push.state in other case', 'Push.State', /is a name the storage root uses itself/],
    ['session.state', 'session.state', /is a name the storage root uses itself/],
    ['NUL', 'a\u0000b', /control character U\+0000/],
    ['a newline', 'a\nb', /control character U\+000A/],
    ['DEL', 'a\u007fb', /control character U\+007F/],
    ['a C1 control', 'é\u0085', /control character U\+0085/],
    ['a lone surrogate', 'a\ud800b', /lone UTF-16 surrogate/],
    ['a decomposed é (not NFC)', 'cafe\u0301', /not in Unicode normalisation form NFC/],
  ])('refused: %s', (_what, name, why) => {
    expect(entryNameProblem(name)).toMatch(why);
  });

  test("every name of the root's own is refused as a session and not listed as one", () => {
    for (const n of [...Object.values(ROOT_NAMES), SESSION_STATE, '.push-0123abcd.lock', '.tmp-push.state-1-abcd']) {
      expect([n, entryNameProblem(n)]).toEqual([n, expect.any(String)]);
      expect(isRootOwnName(n)).toBe(true);
      expect(isSessionEntryName(n)).toBe(false);
    }
    expect(isSessionEntryName('e29b7cdd-32c6-4521-907b-30ef9a1399f6')).toBe(true);
  });
});
