/**
 * The test OAP's tables and its view: a conversation rebuilt from the rows it stored is the very
 * document our own page builds from the storage root, and it is built from the rows, not from
 * anything else: a file the OAP never stored shows as missing in the document.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { servedView } from '../../src/extensions/view/served-view.js';
import { describeLanded, describeRound, type OutFile } from '../../src/exporters/otlp/records.js';
import { listRounds } from '../../src/storage/chain.js';
import { listLanded } from '../../src/storage/landed-files.js';
import { cleanupTemp } from '../helpers/tmp.js';
import { fixtureRoot, SID } from '../helpers/view-fixture.js';
import { applyConversationRule, type KeyValue } from './lal.js';
import { ConversationTables } from './store.js';

afterAll(cleanupTemp);

const s = (key: string, v: string): KeyValue => ({ key, value: { value: 'stringValue', stringValue: v } });
const identity = (instance: string) => [s('service.name', 'Claude Code'), s('service.instance.id', instance), s('service.layer', 'AI_AGENT')];

/** Our exporter's attributes in the wire's shape (proto-loader's oneof naming). */
function wireAttrs(f: OutFile): KeyValue[] {
  return f.attributes.map((a) => {
    const [which, v] = Object.entries(a.value)[0]!;
    return { key: a.key, value: { value: which, [which]: which === 'intValue' ? String(v) : v } as never };
  });
}

function store(tables: ConversationTables, instance: string, files: OutFile[]): void {
  for (const f of files) {
    const o = applyConversationRule(identity(instance), wireAttrs(f), { value: 'stringValue', stringValue: f.bytes.toString('utf8') });
    if (o.verdict !== 'accepted') throw new Error(`${f.rel}: ${JSON.stringify(o)}`);
    tables.put({ ...o.row, file: f.rel });
  }
}

describe("the test OAP's view of a conversation", () => {
  const b = fixtureRoot();
  const conversation = SID;
  const landed = listLanded(b.root, SID).map((l) => describeLanded(l.rel, readFileSync(l.path)));
  const rounds = listRounds(b.root, conversation).map((r) => describeRound(`_conversations/${conversation}/rounds/${r.name}`, readFileSync(r.path)));
  // The document our page serves for this root (the build plus the page's title rule).
  const page = JSON.parse(JSON.stringify(servedView(b.root, conversation).doc)) as { summary: { state: string; problems: string[] } };

  test('from every stored file it equals the document our page builds, key for key', () => {
    expect(landed.length).toBeGreaterThan(1);
    expect(rounds.length).toBeGreaterThan(0);
    const tables = new ConversationTables();
    store(tables, 'ann@box', [...landed, ...rounds]);
    expect(tables.conversations('Claude Code')).toEqual([conversation]);
    expect(page.summary.state).toBe('verified');
    expect(tables.view('Claude Code', conversation)).toEqual(page);
    expect(tables.view('Other', conversation)).toBeUndefined();
  });

  test('a file it never stored is missing from its document, as the route reports it', () => {
    const tables = new ConversationTables();
    store(tables, 'ann@box', [...landed.slice(1), ...rounds]);
    const doc = tables.view('Claude Code', conversation) as typeof page;
    expect(doc).not.toEqual(page);
    expect(doc.summary.state).toBe('incomplete');
    expect(doc.summary.problems.join('\n')).toContain(`landed sequence ${JSON.parse(landed[0]!.bytes.toString('utf8').split('\n')[0]!).seq}`);
  });

  test('two senders of one service keep a row each; the view reads one copy, or one sender when named', () => {
    const tables = new ConversationTables();
    store(tables, 'ann@box', [...landed, ...rounds]);
    store(tables, 'bob@box', [...landed, ...rounds]);
    store(tables, 'ann@box', landed.slice(0, 1));
    expect(tables.all()).toHaveLength(2 * (landed.length + rounds.length));
    expect(tables.rewrites).toBe(1);
    expect(tables.view('Claude Code', conversation)).toEqual(page);
    expect(tables.view('Claude Code', conversation, 'bob@box')).toEqual(page);
    expect(tables.view('Claude Code', conversation, 'eve@box')).toBeUndefined();
  });
});
