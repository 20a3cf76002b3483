/** Which landing failures are parked in the quarantine (they fail the same way every time) and which are retried (the disk may recover). */
import { describe, expect, test } from '@jest/globals';
import { failureKind, failureReason } from '../../src/receivers/claude-code-otlp/landing/failure-kind.js';

const errno = (code: string, syscall = 'open') => Object.assign(new Error(`${code}: ${syscall}`), { code, syscall });

describe('landing failure kinds', () => {
  test.each(['ENAMETOOLONG', 'ENOTDIR', 'EISDIR', 'EINVAL', 'EILSEQ', 'ELOOP'])('%s is permanent: the records are quarantined', (code) => {
    expect(failureKind(errno(code))).toBe('permanent');
    expect(failureReason(errno(code))).toBe(code);
  });
  test.each(['ENOSPC', 'EROFS', 'EIO', 'EACCES', 'EPERM', 'EMFILE', 'ENFILE', 'EDQUOT', 'ENOENT', 'EWHATEVER'])(
    '%s is transient: the records stay in the journal',
    (code) => {
      expect(failureKind(errno(code))).toBe('transient');
    },
  );
  test('EEXIST is permanent only where a directory must be created (a file sits there), not for a name collision of a link', () => {
    expect(failureKind(errno('EEXIST', 'mkdir'))).toBe('permanent');
    expect(failureKind(errno('EEXIST', 'link'))).toBe('transient');
  });
  test('an error with no errno is a bug that fails the same way next time: permanent, reason internal', () => {
    expect(failureKind(new TypeError('x is undefined'))).toBe('permanent');
    expect(failureReason(new TypeError('x is undefined'))).toBe('internal');
  });
});
