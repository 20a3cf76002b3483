/**
 * The test OAP's LAL path rejects what SkyWalking's rule and builder reject, with the reason label
 * the OAP counts, and keeps what they keep: so a run against it cannot pass what it does not check.
 * Digests here are computed by node:crypto on the literal body, independent of aszcol's code.
 */
import { describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { applyConversationRule, countLines, type KeyValue } from './lal.js';

const s = (key: string, v: string): KeyValue => ({ key, value: { value: 'stringValue', stringValue: v } });
const n = (key: string, v: number): KeyValue => ({ key, value: { value: 'intValue', intValue: String(v) } });
const d = (key: string, v: number): KeyValue => ({ key, value: { value: 'doubleValue', doubleValue: v } });
const text = (t: string) => ({ value: 'stringValue', stringValue: t });

const RESOURCE = [s('service.name', 'Claude Code'), s('service.instance.id', 'ann@box'), s('service.layer', 'AI_AGENT')];
const SD_BODY = '{"h":1,"schema":"sd/1","seq":3}\n{"ord":1}\n{"t":"end"}\n';
const SF_BODY = '{"t":"header","round":1}\n{"t":"commit"}\n';
const sha = (b: string) => createHash('sha256').update(b, 'utf8').digest('hex');

function sd(extra: KeyValue[] = [], drop: string[] = []): KeyValue[] {
  const base = [
    s('asz.format', 'sd'),
    s('asz.file', 'S/streams/main/transcript-x-000003.sd'),
    s('asz.file.digest', sha(SD_BODY)),
    n('asz.lines', 3),
    s('asz.session', 'S'),
    n('asz.seq', 3),
  ];
  return [...base.filter((a) => !drop.includes(a.key)), ...extra];
}

function sf(extra: KeyValue[] = [], drop: string[] = []): KeyValue[] {
  const base = [
    s('asz.format', 'sf'),
    s('asz.file', '_conversations/C/rounds/r000001-aaaaaaaaaaaa.sf'),
    s('asz.file.digest', sha(SF_BODY)),
    n('asz.lines', 2),
    s('asz.session', 'S'),
    s('asz.conversation', 'C'),
    n('asz.round', 1),
  ];
  return [...base.filter((a) => !drop.includes(a.key)), ...extra.filter((e) => !base.some((b) => b.key === e.key))];
}

const FIVE = [
  n('asz.conversation.talks', 2),
  n('asz.conversation.steps', 5),
  n('asz.conversation.streams', 1),
  n('asz.conversation.segments', 1),
  n('asz.conversation.unresolved', 0),
];

describe('the LAL rule and the ConversationFile builder, as the test OAP applies them', () => {
  test('a Session Data file whose digest and line count hold is stored under its service and instance, with the extractor fields', () => {
    const o = applyConversationRule(RESOURCE, sd(), text(SD_BODY));
    expect(o.verdict).toBe('accepted');
    if (o.verdict !== 'accepted') return;
    expect(o.row).toMatchObject({ service: 'Claude Code', instance: 'ann@box', format: 'sd', digest: sha(SD_BODY), body: SD_BODY });
    expect(o.row.fields).toMatchObject({ format: 'sd', lines: 3, session: 'S', seq: 3 });
  });

  test('a round with its title and every count is stored, the counts as numbers', () => {
    const counts = [...FIVE, n('asz.conversation.llm_calls', 4), n('asz.conversation.subagents', 1), n('asz.conversation.bash_runs', 2)];
    const o = applyConversationRule(RESOURCE, sf([s('asz.conversation.title', 'Fix it'), ...counts]), text(SF_BODY));
    expect(o.verdict).toBe('accepted');
    if (o.verdict === 'accepted')
      expect(o.row.fields).toMatchObject({ conversation: 'C', round: 1, title: 'Fix it', talks: 2, steps: 5, llmCalls: 4, subagents: 1, bashRuns: 2 });
  });

  test('a round without the counts added later is stored: each is read only when present', () => {
    expect(applyConversationRule(RESOURCE, sf(), text(SF_BODY)).verdict).toBe('accepted');
    expect(applyConversationRule(RESOURCE, sf(FIVE), text(SF_BODY)).verdict).toBe('accepted');
  });

  test.each([
    ['no digest', sd([], ['asz.file.digest']), SD_BODY, 'attributes'],
    ['no format', sd([], ['asz.format']), SD_BODY, 'attributes'],
    ['no line count', sd([], ['asz.lines']), SD_BODY, 'attributes'],
    ['a digest of other bytes', sd([], ['asz.file.digest']).concat(s('asz.file.digest', sha(SD_BODY + 'x'))), SD_BODY, 'digest'],
    ['the body changed on the way', sd(), SD_BODY.replace('"ord":1', '"ord":2'), 'digest'],
    ['a line count one short', sd([], ['asz.lines']).concat(n('asz.lines', 2)), SD_BODY, 'lines'],
    ['a Session Data record without its session', sd([], ['asz.session']), SD_BODY, 'attributes'],
    ['a Session Data record without its seq', sd([], ['asz.seq']), SD_BODY, 'attributes'],
    ['a format the builder does not know', sd([], ['asz.format']).concat(s('asz.format', 'sx')), SD_BODY, 'attributes'],
  ])('%s: rejected, counted under reason=%s', (_what, attrs, body, reason) => {
    const o = applyConversationRule(RESOURCE, attrs, text(body));
    expect(o).toMatchObject({ verdict: 'rejected', reason });
  });

  test('a round without its round number or conversation is rejected for its attributes', () => {
    expect(applyConversationRule(RESOURCE, sf([], ['asz.round']), text(SF_BODY))).toMatchObject({ verdict: 'rejected', reason: 'attributes' });
    expect(applyConversationRule(RESOURCE, sf([], ['asz.conversation']), text(SF_BODY))).toMatchObject({ verdict: 'rejected', reason: 'attributes' });
  });

  test('a count that is not a whole number fails the extractor: the OAP keeps nothing and counts no rejection', () => {
    const notNumber = FIVE.map((a) => (a.key === 'asz.conversation.steps' ? s(a.key, 'many') : a));
    expect(applyConversationRule(RESOURCE, sf(notNumber), text(SF_BODY))).toMatchObject({ verdict: 'dropped', stage: 'extractor' });
    expect(applyConversationRule(RESOURCE, sf([s('asz.conversation.llm_calls', '')]), text(SF_BODY)).verdict).toBe('accepted');
    expect(applyConversationRule(RESOURCE, sf([s('asz.conversation.bash_runs', '2.5')]), text(SF_BODY))).toMatchObject({
      verdict: 'dropped',
      stage: 'extractor',
    });
    // A double attribute reads as Java prints it, "3.0", which `as Long` refuses.
    expect(applyConversationRule(RESOURCE, sd([], ['asz.lines']).concat(d('asz.lines', 3)), text(SD_BODY))).toMatchObject({
      verdict: 'dropped',
      stage: 'extractor',
    });
  });

  test('one guard reads the five counts together: talks without steps fails the extractor', () => {
    const withoutSteps = FIVE.filter((a) => a.key !== 'asz.conversation.steps');
    expect(applyConversationRule(RESOURCE, sf(withoutSteps), text(SF_BODY))).toMatchObject({ verdict: 'dropped', stage: 'extractor' });
  });

  test('a record outside the AI_AGENT layer never reaches the rule; one without a service name is discarded by the handler', () => {
    const noLayer = RESOURCE.filter((a) => a.key !== 'service.layer');
    expect(applyConversationRule(noLayer, sd(), text(SD_BODY))).toMatchObject({ verdict: 'dropped', stage: 'routing' });
    expect(applyConversationRule([...noLayer, s('service.layer', 'GENERAL')], sd(), text(SD_BODY))).toMatchObject({ verdict: 'dropped', stage: 'routing' });
    expect(applyConversationRule(RESOURCE.slice(1), sd(), text(SD_BODY))).toMatchObject({ verdict: 'dropped', stage: 'handler' });
  });

  test('an instance-less sender is stored as "unknown"; a body that is not a string reads as empty and fails the digest', () => {
    const o = applyConversationRule(
      RESOURCE.filter((a) => a.key !== 'service.instance.id'),
      sd(),
      text(SD_BODY),
    );
    expect(o.verdict === 'accepted' && o.row.instance).toBe('unknown');
    const bytes = { value: 'bytesValue', bytesValue: Buffer.from(SD_BODY) } as never;
    expect(applyConversationRule(RESOURCE, sd(), bytes)).toMatchObject({ verdict: 'rejected', reason: 'digest' });
  });

  test('lines are newline-terminated lines, and a last line without one counts too', () => {
    expect([countLines(Buffer.from('')), countLines(Buffer.from('a\n')), countLines(Buffer.from('a\nb')), countLines(Buffer.from('a\n\n'))]).toEqual([
      0, 1, 2, 2,
    ]);
  });
});
