import { afterAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { appendFileSync, chmodSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { readSessionData } from '../../src/formats/session-data/decode.js';
import { decodeRound } from '../../src/formats/session-flow/decode.js';
import { encodeRound } from '../../src/formats/session-flow/encode.js';
import { parseSession } from '../../src/processors/assembler/parse.js';
import { CHECK_AT, ScenarioChecker } from '../../src/scenario/check.js';
import { generate } from '../../src/scenario/generate.js';
import { parseScenario } from '../../src/scenario/model.js';
import {
  crossFormatViolations,
  recordsMatchViolations,
  EVALUATED,
  evaluateProperty,
  judge,
  NOT_EVALUATED,
  type PropertyContext,
} from '../../src/scenario/properties.js';
import { ScenarioRoot, type Format } from '../../src/scenario/run.js';
import { withoutChanges } from '../../src/scenario/changes-check.js';
import { repackKeepsStructure } from '../../src/scenario/repack-check.js';
import { providerBodiesRebuild } from '../../src/scenario/provider-body-check.js';
import { listLanded } from '../../src/storage/landed-files.js';
import { listRounds } from '../../src/storage/chain.js';
import { loadIndex, saveIndex } from '../../src/storage/index.js';
import { buildView } from '../../src/formats/view/build.js';
import { loadViewInput } from '../../src/extensions/view/load.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

/** A person asks, a tool runs, a helper agent reports, every call's API bodies dumped: enough for every property to have something to hold over. */
const SCENARIO = {
  provider_bodies: true,
  system_prompt: 'You build and check the project.',
  tools: [{ name: 'Bash', description: 'Runs a command.' }],
  steps: [
    { input: 'run the build' },
    { call: { text: 'Building.', tool: { id: 't1', name: 'Bash', input: { command: 'make' }, result: { text: 'built' } } } },
    { call: { agent: { name: 'helper', prompt: 'check it', steps: [{ call: { text: 'Checked.' } }], notify: true } } },
    // An MCP call the aszcol plugin's hooks observed: which server, where it is configured, how long it took.
    {
      call: {
        tool: {
          id: 'm1',
          name: 'mcp__status__lookup',
          input: { service: 'api' },
          result: 'api: healthy',
          execution: { server: 'status', source: 'project', duration: '35ms' },
        },
      },
    },
    {
      call: {
        tool: {
          name: 'Edit',
          input: { file_path: '/Users/dev/scenario/VERSION' },
          result: 'updated',
          changes: [{ path: 'VERSION', before: '0.2.0\n', after: '0.3.0\n' }],
        },
      },
    },
    { call: { text: 'Built and checked.' } },
  ],
};

function builtRoot(format: Format, doc: unknown = SCENARIO, name = 'props'): PropertyContext {
  const scn = parseScenario(doc, name);
  const root = new ScenarioRoot(join(tempDir(), format), format, scn, CHECK_AT);
  root.build();
  root.parse();
  return { scn, dir: root.dir, session: generate(scn, { at: CHECK_AT }).session, format, root, at: CHECK_AT };
}

const writable = (path: string) => chmodSync(path, 0o644);

/** Deletes the helper agent's landed transcript, after the round bound to it, as `lose` does. */
function loseHelperTranscript(ctx: PropertyContext): void {
  const f = listLanded(ctx.dir, ctx.session).find((l) => {
    const h = readSessionData(l.path).header;
    return h.kind === 'transcript' && h.stream !== 'main';
  })!;
  writable(f.path);
  rmSync(f.path);
}

/** Drops the helper's records from the session's saved index, as an index that lost entries would. */
function forgetHelperInIndex(ctx: PropertyContext): void {
  const ix = loadIndex(ctx.dir, ctx.session)!;
  const helper = new Set(ix.files.filter((f) => f.kind === 'transcript' && f.stream !== 'main').map((f) => f.seq));
  saveIndex(ctx.dir, { ...ix, entries: ix.entries.filter((e) => !helper.has(e.seq)) });
}

const realDocument = (dir: string, session: string) => buildView(loadViewInput(dir, session));

/** A document that reports a damaged root as whole: verified, no problems, every round verified. */
const hidingDamage = (dir: string, session: string) => {
  const doc = realDocument(dir, session);
  return { ...doc, summary: { ...doc.summary, state: 'verified' as const, problems: [] }, rounds: doc.rounds.map((r) => ({ ...r, verified: true })) };
};

/** A document that reports damage on a whole root: incomplete, one problem, its first round unverified. */
const inventingDamage = (dir: string, session: string) => {
  const doc = realDocument(dir, session);
  return {
    ...doc,
    summary: { ...doc.summary, state: 'incomplete' as const, problems: ['a landed file is not on disk'] },
    rounds: doc.rounds.map((r, i) => ({ ...r, verified: i !== 0 })),
  };
};

/** Breaks one property on a root, the way a bug in that part would. */
const BREAK: Record<string, (ctx: PropertyContext) => void> = {
  // A parse whose rounds depend on something besides the landed files: here, a changing budget.
  reproducible: (ctx) => {
    let calls = 0;
    ctx.reparse = (root, session) => void parseSession({ root, session, maxRoundBytes: calls++ === 0 ? 2 ** 40 : 1 });
  },
  // The index no longer holds the records the rounds were built from: a parse of it assembles less than the fold.
  fold_equals_parse: (ctx) => forgetHelperInIndex(ctx),
  immutable_rounds: (ctx) => writable(listRounds(ctx.dir, ctx.session)[0]!.path),
  // The head round gone: the chain no longer covers its landed files, so re-deriving them writes a round.
  bundle: (ctx) => rmSync(listRounds(ctx.dir, ctx.session).at(-1)!.path),
  // The head round's header counts a talk its frames do not hold.
  header_matches_fold: (ctx) => {
    const head = listRounds(ctx.dir, ctx.session).at(-1)!;
    const round = decodeRound(readFileSync(head.path, 'utf8'), head.path);
    writable(head.path);
    writeFileSync(head.path, encodeRound({ ...round.header, talks: round.header.talks + 1 }, round.frames).text);
  },
  // A landed record carrying a field the format gives no purpose to, its closing digest made right again.
  records_well_formed: (ctx) => {
    const f = listLanded(ctx.dir, ctx.session)[0]!;
    const lines = readFileSync(f.path, 'utf8').split('\n').slice(0, -2);
    lines[1] = JSON.stringify({ ...JSON.parse(lines[1]!), colour: 'red' });
    const body = lines.map((l) => l + '\n').join('');
    const digest = createHash('sha256').update(body).digest('hex');
    writable(f.path);
    writeFileSync(f.path, body + JSON.stringify({ t: 'end', records: lines.length - 1, digest }) + '\n');
  },
  // The session keeps growing after the build: a second collect has something new to land.
  recollect_idempotent: (ctx) => {
    const main = readdirSync(join(ctx.dir, '_source', 'projects'), { recursive: true })
      .map(String)
      .find((p) => p.endsWith(`${ctx.session}.jsonl`))!;
    appendFileSync(
      join(ctx.dir, '_source', 'projects', main),
      JSON.stringify({ type: 'system', subtype: 'note', uuid: 'late-1', sessionId: ctx.session }) + '\n',
    );
  },
  // A landed file gone, and a document that calls the root verified all the same.
  view_covers_the_session: (ctx) => {
    loseHelperTranscript(ctx);
    ctx.viewDocument = hidingDamage;
  },
  // A landed file gone after the round bound to it: the re-cut root cannot hold what the chain names.
  repack_keeps_structure: (ctx) => {
    loseHelperTranscript(ctx);
  },
  every_line_a_record: (ctx) => {
    loseHelperTranscript(ctx);
  },
  // The build without executions differs in more than its executions (a step gone): the folds no longer agree.
  executions_leave_the_fold: (ctx) => {
    ctx.withoutExecutions = (scn) => ({ ...scn, steps: scn.steps.slice(0, -1) });
  },
  // The build without changes differs in more than its changes (a step gone): the folds no longer agree.
  changes_leave_the_fold: (ctx) => {
    ctx.withoutChanges = (scn) => {
      const stripped = withoutChanges(scn);
      return { ...stripped, steps: stripped.steps.slice(0, -1) };
    };
  },
  // The session's own transcript grew since the last pass: a pass among the noise has something to land.
  discovery_ignores_noise: (ctx) => {
    const main = readdirSync(join(ctx.dir, '_source', 'projects'), { recursive: true })
      .map(String)
      .find((p) => p.endsWith(`${ctx.session}.jsonl`))!;
    appendFileSync(
      join(ctx.dir, '_source', 'projects', main),
      JSON.stringify({ type: 'system', subtype: 'note', uuid: 'late-2', sessionId: ctx.session }) + '\n',
    );
  },
  // The same growth shows once the pruned files are put back: the pass after the restore lands it.
  pruned_sources_gone: (ctx) => {
    const main = readdirSync(join(ctx.dir, '_source', 'projects'), { recursive: true })
      .map(String)
      .find((p) => p.endsWith(`${ctx.session}.jsonl`))!;
    appendFileSync(
      join(ctx.dir, '_source', 'projects', main),
      JSON.stringify({ type: 'system', subtype: 'note', uuid: 'late-3', sessionId: ctx.session }) + '\n',
    );
  },
  // A source byte changed in place after it landed: the landed record's digest no longer names it.
  parts_keep_source_bytes: (ctx) => {
    const main = readdirSync(join(ctx.dir, '_source', 'projects'), { recursive: true })
      .map(String)
      .find((p) => p.endsWith(`${ctx.session}.jsonl`))!;
    const path = join(ctx.dir, '_source', 'projects', main);
    writeFileSync(path, readFileSync(path, 'utf8').replace('run the build', 'run the bui1d'));
  },
  // A landed file whose closing line no longer counts its records: the push cannot send it as the contract says.
  push_follows_the_wire: (ctx) => {
    const f = listLanded(ctx.dir, ctx.session)[0]!;
    writable(f.path);
    appendFileSync(f.path, JSON.stringify({ ord: 99, off: 0, sha: '000000000000', bytes: 1, parts: [] }) + '\n');
  },
  // A scenario whose build without bodies differs in more than its bodies (a step gone): the folds no longer agree.
  provider_bodies_leave_the_fold: (ctx) => {
    ctx.withoutBodies = (scn) => ({ ...scn, providerBodies: false, steps: scn.steps.slice(0, -1) });
  },
  // The landed body file gone after the rounds listed its bodies: a call's body no longer rebuilds.
  provider_bodies_rebuild: (ctx) => {
    const f = listLanded(ctx.dir, ctx.session).find((l) => readSessionData(l.path).header.kind === 'provider_body')!;
    writable(f.path);
    rmSync(f.path);
  },
  // The plan says the MCP call took a second longer than the session that was built: its pushed duration no longer matches.
  metrics_match_the_plan: (ctx) => {
    ctx.scn = { ...ctx.scn, interval: ctx.scn.interval + 1000 };
  },
  // A file the build wrote changed after it was marked: a pipeline must keep the session for a person.
  removed_after_sent: (ctx) => {
    const main = readdirSync(join(ctx.dir, '_source', 'projects'), { recursive: true })
      .map(String)
      .find((p) => p.endsWith(`${ctx.session}.jsonl`))!;
    appendFileSync(join(ctx.dir, '_source', 'projects', main), '\n');
  },
};

describe('every evaluated property can fail both ways', () => {
  test('the table of breaks covers every evaluated property', () => {
    expect(Object.keys(BREAK).sort()).toEqual(Object.keys(EVALUATED).sort());
  });

  for (const name of Object.keys(EVALUATED))
    for (const format of EVALUATED[name]!.formats)
      test(`${name} (${format}): true fails once it is broken, false fails while it holds`, () => {
        const ctx = builtRoot(format);
        const holding = evaluateProperty(name, ctx);
        expect(holding).toEqual([]);
        expect(judge(name, true, holding)).toEqual([]);
        expect(judge(name, false, holding)).toEqual([{ where: name, expected: 'does not hold (set false)', got: 'holds' }]);

        BREAK[name]!(ctx);
        const broken = evaluateProperty(name, ctx);
        expect(broken.length).toBeGreaterThan(0);
        expect(broken.every((v) => v.where.startsWith(name))).toBe(true);
        expect(judge(name, true, broken)).toEqual(broken);
        expect(judge(name, false, broken)).toEqual([]);
      });

  test('cross_format: the same scenario agrees across formats, two different ones do not', () => {
    const cc = builtRoot('claude-code'),
      sd = builtRoot('sd');
    const agree = crossFormatViolations(cc, sd);
    expect(agree).toEqual([]);
    expect(judge('cross_format', false, agree)).toHaveLength(1);
    const other = builtRoot('sd', { session: cc.session, steps: SCENARIO.steps.slice(0, 2) }, 'shorter');
    const differ = crossFormatViolations(cc, other);
    expect(differ.length).toBeGreaterThan(0);
    expect(judge('cross_format', true, differ)).toEqual(differ);
    expect(judge('cross_format', false, differ)).toEqual([]);
  });

  test('records_match: the two formats land the same records field by field; a different scenario does not', () => {
    const cc = builtRoot('claude-code'),
      sd = builtRoot('sd');
    const agree = recordsMatchViolations(cc, sd);
    expect(agree).toEqual([]);
    expect(judge('records_match', false, agree)).toHaveLength(1);
    // The same steps with another tool result: one record differs, and is named.
    const changed = structuredClone(SCENARIO);
    (changed.steps[1] as { call: { tool: { result: { text: string } } } }).call.tool.result.text = 'failed to build';
    const differ = recordsMatchViolations(cc, builtRoot('sd', { ...changed }, 'props'));
    // The result's record, and the next call's request body, which carries the conversation so far.
    expect(differ).toHaveLength(2);
    expect(differ[0]!.where).toMatch(/^records_match: transcript .* stream main record \d+$/);
    expect(differ[1]!.where).toMatch(/^records_match: provider_body \. record \d+$/);
    expect(String(differ[1]!.got)).toContain('failed to build');
    expect(judge('records_match', true, differ)).toEqual(differ);
    expect(judge('records_match', false, differ)).toEqual([]);
  });
});

/** A property's verdict both ways: what `true` and what `false` would fail with. */
function bothWays(name: string, violations: { where: string }[]) {
  return {
    holds: violations.length === 0,
    failsTrue: judge(name, true, violations as never).length > 0,
    failsFalse: judge(name, false, violations as never).length > 0,
  };
}

const HOLDS = { holds: true, failsTrue: false, failsFalse: true };
const BROKEN = { holds: false, failsTrue: true, failsFalse: false };

/** Deletes the plugin's landed execution file: records the fold never takes in. */
function loseExecutionFile(ctx: PropertyContext): void {
  const f = listLanded(ctx.dir, ctx.session).find((l) => readSessionData(l.path).header.kind === 'execution')!;
  writable(f.path);
  rmSync(f.path);
}

// asz's checker (expect.go, 0.6) reads a root a person damaged by its own rules; each of the three holds or breaks there, and on a whole root.
describe('a damaged root, read as asz reads it', () => {
  test('view_covers_the_session: the document must report what verify reports, no more and no less', () => {
    const ctx = builtRoot('sd');
    const verdict = () => bothWays('view_covers_the_session', evaluateProperty('view_covers_the_session', ctx));
    expect(verdict()).toEqual(HOLDS);
    ctx.viewDocument = inventingDamage; // damage on a whole root
    const invented = evaluateProperty('view_covers_the_session', ctx).map((v) => v.where);
    expect(invented).toEqual(['view_covers_the_session: state', 'view_covers_the_session: problems', 'view_covers_the_session: round 1 verified']);
    expect(verdict()).toEqual(BROKEN);

    delete ctx.viewDocument;
    loseHelperTranscript(ctx);
    // The real document says incomplete with verify's problems: the property holds on the damaged root.
    expect(realDocument(ctx.dir, ctx.session).summary.state).toBe('incomplete');
    expect(verdict()).toEqual(HOLDS);
    ctx.viewDocument = hidingDamage;
    expect(evaluateProperty('view_covers_the_session', ctx).map((v) => v.where)).toEqual(
      expect.arrayContaining(['view_covers_the_session: state', 'view_covers_the_session: problems']),
    );
    expect(verdict()).toEqual(BROKEN);
  });

  test("fold_equals_parse: the session's own index assembles to the fold, whatever was deleted; an index missing records does not", () => {
    const whole = builtRoot('claude-code');
    const verdict = (ctx: PropertyContext) => bothWays('fold_equals_parse', evaluateProperty('fold_equals_parse', ctx));
    expect(verdict(whole)).toEqual(HOLDS);
    forgetHelperInIndex(whole);
    expect(verdict(whole)).toEqual(BROKEN);

    const damaged = builtRoot('claude-code');
    loseHelperTranscript(damaged);
    expect(verdict(damaged)).toEqual(HOLDS);
    forgetHelperInIndex(damaged);
    const broken = evaluateProperty('fold_equals_parse', damaged);
    // The helper's talk is in the fold and not in what the index now assembles.
    expect(broken.some((v) => v.where.startsWith('fold_equals_parse: talk/') && v.expected === '(absent)')).toBe(true);
    expect(verdict(damaged)).toEqual(BROKEN);
  });

  test('bundle: the landed files alone must assemble the fold; a lost file the fold drew on breaks it, one it never drew on does not', () => {
    const verdict = (ctx: PropertyContext) => bothWays('bundle', evaluateProperty('bundle', ctx));
    const whole = builtRoot('sd');
    expect(verdict(whole)).toEqual(HOLDS);
    rmSync(listRounds(whole.dir, whole.session).at(-1)!.path);
    expect(verdict(whole)).toEqual(BROKEN);

    const drewOn = builtRoot('sd');
    loseHelperTranscript(drewOn);
    const broken = evaluateProperty('bundle', drewOn);
    expect(broken).toHaveLength(1);
    expect(broken[0]!.where).toMatch(/^bundle: re-deriving from the landed files: .* \(\d+ difference\(s\) from the fold\)$/);
    expect(verdict(drewOn)).toEqual(BROKEN);

    // The plugin's observations of an MCP call and of a shell command: the execution file lands before the changes file.
    const observed = {
      steps: [
        { input: 'go' },
        {
          call: {
            tool: { id: 'm1', name: 'mcp__status__lookup', input: {}, result: 'ok', execution: { server: 'status', source: 'project', duration: '35ms' } },
          },
        },
        { call: { tool: { id: 'b1', name: 'Bash', input: { command: 'touch a.txt' }, result: { text: 'ok' }, changes: [{ path: 'a.txt' }] } } },
        { call: { text: 'done' } },
      ],
    };
    const neverDrewOn = builtRoot('sd', observed, 'observed');
    loseExecutionFile(neverDrewOn);
    expect(verdict(neverDrewOn)).toEqual(HOLDS);
    // The session's last landed file gone: the head round reaches past every file left, which no re-derivation can cover.
    const pastTheEnd = builtRoot('sd', observed, 'observed');
    const last = listLanded(pastTheEnd.dir, pastTheEnd.session).at(-1)!;
    writable(last.path);
    rmSync(last.path);
    expect(evaluateProperty('bundle', pastTheEnd)[0]!.got).toMatch(/the chain covers landed sequence 3, the index only 2/);
    expect(verdict(pastTheEnd)).toEqual(BROKEN);
  });
});

/** Writes NAME.yaml and NAME.expect.yaml into a fresh directory and checks them. */
function check(expectation: unknown, scenario: unknown = SCENARIO, formats: Format[] = ['claude-code', 'sd']) {
  const dir = tempDir();
  writeFileSync(join(dir, 'case.yaml'), stringify(scenario));
  writeFileSync(join(dir, 'case.expect.yaml'), stringify(expectation));
  return new ScenarioChecker(join(dir, 'case.yaml'), { formats }).run();
}

describe('provider bodies on a re-cut root', () => {
  test('the repacked copy carries every body, and a body that does not rebuild there to what the runtime wrote is named as such', () => {
    const ctx = builtRoot('claude-code');
    const onCopy: string[] = [];
    // Rebuilt on the re-cut root against the dump the scenario wrote: every body is there, moved, and rebuilds.
    expect(
      repackKeepsStructure(ctx.dir, ctx.session, (dest) => {
        onCopy.push(
          ...listLanded(dest, ctx.session)
            .filter((l) => readSessionData(l.path).header.kind === 'provider_body')
            .map((l) => l.rel),
        );
        return providerBodiesRebuild(dest, ctx.session, ctx.scn, ctx.at);
      }),
    ).toEqual([]);
    expect(onCopy.length).toBeGreaterThan(listLanded(ctx.dir, ctx.session).filter((l) => readSessionData(l.path).header.kind === 'provider_body').length);
    // Against another dump (a different answer in the scenario): the copy's bodies are not the runtime's bytes.
    const other = parseScenario({ ...SCENARIO, steps: [...SCENARIO.steps.slice(0, -1), { call: { text: 'Built, checked, reported.' } }] }, 'props');
    const broken = repackKeepsStructure(ctx.dir, ctx.session, (dest) => providerBodiesRebuild(dest, ctx.session, other, ctx.at));
    expect(broken.length).toBeGreaterThan(0);
    expect(broken.every((v) => v.where.startsWith('repack_keeps_structure: on the re-cut root: provider_bodies_rebuild'))).toBe(true);
  });
});

describe('scenario check judges what an expectation names', () => {
  test('a property set false on a root where it holds fails the scenario, in each format', () => {
    const results = check({ properties: { header_matches_fold: false, cross_format: false, records_match: false } });
    expect(results.map((r) => [r.format, r.status])).toEqual([
      ['claude-code', 'failed'],
      ['sd', 'failed'],
      ['all', 'failed'],
    ]);
    expect(results[0]!.failures.map((f) => f.where)).toEqual(['claude-code: header_matches_fold']);
    expect(results[2]!.failures.map((f) => f.where)).toEqual(['cross_format', 'records_match']);
  });

  test('a lost file: the properties that cannot hold are asserted false, and pass so', () => {
    const results = check({
      checkpoints: { final: { lose: [{ stream: 'helper', kind: 'transcript' }] } },
      properties: { every_line_a_record: false, bundle: false, repack_keeps_structure: false },
    });
    expect(results.filter((r) => r.format !== 'all').map((r) => [r.format, r.status, r.failures])).toEqual([
      ['claude-code', 'passed', []],
      ['sd', 'passed', []],
    ]);
    // Said true instead, the same root fails them: a lost file is not skipped over.
    const wrong = check({ checkpoints: { final: { lose: [{ stream: 'helper', kind: 'transcript' }] } } }, SCENARIO, ['claude-code']);
    expect(wrong[0]!.status).toBe('failed');
    expect(new Set(wrong[0]!.failures.map((f) => f.where.split(': ')[1]!.split(' ')[0]))).toEqual(
      new Set(['every_line_a_record', 'bundle', 'repack_keeps_structure']),
    );
  });

  // Every property asz 0.6 names is evaluated now; a name added here without an evaluator must still be incomplete, never passed.
  const notEvaluated = Object.keys(NOT_EVALUATED);
  if (notEvaluated.length)
    test.each(notEvaluated)('%s, named true or false, makes the scenario incomplete by name, never passed', (name) => {
      for (const want of [true, false]) {
        const [r] = check({ properties: { [name]: want } }, SCENARIO, ['sd']);
        expect(r!.status).toBe('incomplete');
        expect(r!.unchecked).toEqual([`properties.${name} (${NOT_EVALUATED[name]})`]);
      }
    });

  test('scenario keys the generator does not act on make the check incomplete with the reason; the changes of a Bash call are what the plugin sees', () => {
    const doc = {
      provider_bodies: true,
      system_prompt: 'You build things.',
      tools: [{ name: 'Bash', description: 'Runs a command.' }],
      steps: [
        { input: 'go' },
        // A Bash call's change only the plugin sees; an Edit's the runtime records (and is generated).
        { call: { tool: { id: 'e1', name: 'Bash', input: {}, result: { text: 'ok' }, changes: [{ path: 'a.txt' }] } } },
        { call: { agent: { name: 'helper', prompt: 'p', system_prompt: 'You help.', steps: [{ call: { text: 'ok' } }] } } },
      ],
    };
    // The Bash call's change is written as what the plugin's hooks see of it, so nothing is left unchecked.
    const [r] = check({}, doc, ['sd']);
    expect(r!.unchecked).toEqual([]);
    expect(r!.status).toBe('passed');
    // A system prompt and tools go only into provider bodies: without them they are reported, not dropped.
    const bare = parseScenario({ ...doc, provider_bodies: undefined, steps: doc.steps.slice(0, 1).concat(doc.steps.slice(2)) }, 'case');
    expect(bare.ignored.map((i) => i.path)).toEqual(['case.system_prompt', 'case.tools', 'case.steps[1].call.agent.system_prompt']);
    // provider_bodies: false asks for nothing the generator lacks.
    expect(check({}, { provider_bodies: false, steps: [{ input: 'go' }] }, ['sd'])[0]!.status).toBe('passed');
  });

  test('a node expectation {absent: true} fails when the node is there; {absent: false} fails when it is not', () => {
    const node = (spec: unknown) => check({ checkpoints: { final: { nodes: { 'tool/t1': spec, 'tool/none': { absent: true } } } } }, SCENARIO, ['sd'])[0]!;
    expect(node({ absent: false }).status).toBe('passed');
    const wrong = node({ absent: true });
    expect(wrong.status).toBe('failed');
    expect(wrong.failures).toEqual([{ where: 'sd: final.nodes.tool/t1', expected: '(absent)', got: '(present)' }]);
    const missing = check({ checkpoints: { final: { nodes: { 'tool/none': { absent: false } } } } }, SCENARIO, ['sd'])[0]!;
    expect(missing.failures).toEqual([{ where: 'sd: final.nodes.tool/none', expected: '(present)', got: '(absent)' }]);
    expect(() => node({ absent: true, kind: 'tool' })).toThrow(/nodes\.tool\/t1: absent is true or false, alone/);
  });

  test('a property given anything but true or false is an error naming it', () => {
    expect(() => check({ properties: { reproducible: 'yes' } }, SCENARIO, ['sd'])).toThrow(/properties\.reproducible: must be true or false, got "yes"/);
  });
});
