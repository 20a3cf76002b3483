/**
 * Withholding with the real Claude Code CLI: a prompt carrying a marker, a Bash run whose input
 * and output carry others, the runtime's own export with the prompt text in it
 * (`OTEL_LOG_USER_PROMPTS=1`). A view configured with `hide: [user_prompts, tool_inputs,
 * tool_outputs]` must not serve any of the three markers from any endpoint — the list, the
 * document, `/calls`, `/tools`, `/changes`, and every landed record by address — while the same
 * root served without `hide` does (so the grep can find them), and its document names what it
 * withheld. The runtime also sends its beta spans and tool details (`--traces 1`,
 * `OTEL_LOG_TOOL_DETAILS=1`), which carry the prompt, the command and its output again; the same
 * root pushed by an `otlp` exporter with that `hide` to a loopback receiver sends none of the
 * markers, and pushed without it sends all three.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { OtlpReceiver, validateOtlpReceiverConfig } from '../../src/receivers/claude-code-otlp/index.js';
import { ViewExtension } from '../../src/extensions/view/extension.js';
import { validateViewConfig } from '../../src/extensions/view/config.js';
import type { ViewDocument } from '../../src/formats/view/types.js';
import { labRun } from '../helpers/lab.js';
import { REPO, collectAndParse, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { validateOtlpExporterConfig } from '../../src/exporters/otlp/config.js';
import { Pusher } from '../../src/exporters/otlp/pusher.js';
import { sinkForTests } from '../integration/export-sink.js';

afterAll(cleanupTemp);

const SCRIPT = join(REPO, 'test', 'e2e', 'lab-scripts', 'withhold.json');
const PROMPT_MARKER = 'prompt-marker-c41d9e';
/** The Bash input holds the arithmetic; only its output holds the result. */
const INPUT_MARKER = '$((6*7))';
const OUTPUT_MARKER = 'out-7f3a-42';

describe('withholding: prompts, tool inputs and tool outputs kept out of every answer of the view', () => {
  const sink = sinkForTests();
  const base = tempDir('aszcol-e2e-withhold-');
  const home = join(base, 'home');
  const root = join(base, 'data');
  let session = '';
  const bodies = { hidden: new Map<string, string>(), open: new Map<string, string>() };

  /** Every answer a reader can ask for, by path. */
  async function readAll(ext: ViewExtension): Promise<Map<string, string>> {
    const url = `http://${ext.address()}/api`;
    const out = new Map<string, string>();
    const get = async (path: string, absent = false) => {
      const r = await fetch(url + path);
      // A file's lines include its header and closing lines: asking past its last record is a 404.
      if (absent && r.status === 404) return undefined;
      expect({ path, status: r.status }).toEqual({ path, status: 200 });
      out.set(path, await r.text());
      return out.get(path)!;
    };
    await get('/conversations');
    const doc = JSON.parse((await get(`/c/${session}/view`))!) as ViewDocument;
    for (const p of ['calls', 'tools', 'changes']) await get(`/c/${session}/${p}`);
    let records = 0;
    for (const f of doc.files) {
      if (f.format !== 'sd') continue;
      for (let row = 1; row <= f.lines && (await get(`/c/${session}/record/${f.seq}/${row}`, row > 1)) !== undefined; row++) records++;
    }
    expect(records).toBeGreaterThan(10);
    return out;
  }

  beforeAll(async () => {
    const config = writeConfig(base, root, join(home, 'projects'));
    const r = new OtlpReceiver(validateOtlpReceiverConfig({ protocols: { http: { endpoint: '127.0.0.1:0' } } }), { storageRoot: root });
    await r.start();
    try {
      const run = await labRun({
        configDir: home,
        cwd: join(base, 'work'),
        prompt: `SECRETRUN ${PROMPT_MARKER}`,
        tools: 'Bash',
        script: SCRIPT,
        otlp: `http://${r.addresses().http}`,
        protocol: 'http/protobuf',
        env: 'OTEL_LOG_USER_PROMPTS=1,OTEL_LOG_TOOL_DETAILS=1',
        traces: '1',
      });
      session = run.session_id;
      expect(await r.landed(15_000)).toBe(true);
    } finally {
      await r.shutdown();
    }
    await collectAndParse(config);
    for (const [which, hide] of [
      ['hidden', ['user_prompts', 'tool_inputs', 'tool_outputs']],
      ['open', undefined],
    ] as const) {
      const ext = new ViewExtension(validateViewConfig({ endpoint: '127.0.0.1:0', ...(hide ? { hide } : {}) }, 'extensions.view'), { storageRoot: root });
      await ext.start();
      try {
        for (const [k, v] of await readAll(ext)) bodies[which].set(k, v);
      } finally {
        await ext.shutdown();
      }
    }
  }, 300_000);

  test('served without hide, the markers are there to find: in the prompt, the Bash input and its output', () => {
    const all = [...bodies.open.values()].join('\n');
    for (const m of [PROMPT_MARKER, INPUT_MARKER, OUTPUT_MARKER]) expect(all).toContain(m);
  });

  test('served with hide, no answer holds any of the markers', () => {
    expect(bodies.hidden.size).toBe(bodies.open.size);
    for (const [path, body] of bodies.hidden)
      for (const m of [PROMPT_MARKER, INPUT_MARKER, OUTPUT_MARKER]) expect({ path, leaks: body.includes(m) }).toEqual({ path, leaks: false });
  });

  test('the document says what it withheld, by category; without hide it says nothing was', () => {
    const hidden = JSON.parse(bodies.hidden.get(`/c/${session}/view`)!) as ViewDocument & { summary: { withheld: Record<string, number> } };
    expect(Object.keys(hidden.summary.withheld).sort()).toEqual(['tool_inputs', 'tool_outputs', 'user_prompts']);
    for (const n of Object.values(hidden.summary.withheld)) expect(n).toBeGreaterThan(0);
    const open = JSON.parse(bodies.open.get(`/c/${session}/view`)!) as { summary: { withheld: unknown } };
    expect(open.summary.withheld).toEqual({});
    // Withheld steps keep their place: the same nodes, counts and verification.
    const openDoc = JSON.parse(bodies.open.get(`/c/${session}/view`)!) as ViewDocument;
    expect(hidden.summary.steps).toBe(openDoc.summary.steps);
    expect(hidden.summary.state).toBe(openDoc.summary.state);
  });

  test('pushed with the same hide, no marker leaves the machine; pushed without it, all three do', async () => {
    const sent = async (hide: string[] | undefined) => {
      const since = sink.received.length;
      const cfg = validateOtlpExporterConfig({ endpoint: sink.grpcAddress, ...(hide ? { hide } : {}) }, 'exporters.otlp/sink');
      const pusher = new Pusher({ root, cfg, logs: true, metrics: undefined, stateDir: tempDir('aszcol-e2e-withhold-state-') });
      try {
        const r = await pusher.pass({ force: true });
        expect(r.problems).toEqual([]);
        if (hide) expect(r.withheld.records).toBeGreaterThan(0);
      } finally {
        pusher.close();
      }
      return JSON.stringify(sink.received.slice(since).map((x) => x.request));
    };
    const open = await sent(undefined);
    for (const m of [PROMPT_MARKER, INPUT_MARKER, OUTPUT_MARKER]) expect({ m, found: open.includes(m) }).toEqual({ m, found: true });
    const hidden = await sent(['user_prompts', 'tool_inputs', 'tool_outputs']);
    for (const m of [PROMPT_MARKER, INPUT_MARKER, OUTPUT_MARKER]) expect({ m, leaks: hidden.includes(m) }).toEqual({ m, leaks: false });
  });

  test('a hide list is checked: an unknown category or a repeat is refused at its exact path', () => {
    expect(() => validateViewConfig({ hide: ['user_prompts', 'prompts'] }, 'extensions.view')).toThrow(
      /extensions\.view\.hide\[1\].*"prompts" is not a category that can be withheld; one of user_prompts/,
    );
    expect(() => validateViewConfig({ hide: ['tool_inputs', 'tool_inputs'] }, 'extensions.view')).toThrow(/extensions\.view\.hide\[1\].*listed twice/);
    expect(() => validateViewConfig({ hide: 'user_prompts' }, 'extensions.view')).toThrow(/extensions\.view\.hide.*must be a list of strings/);
  });
});
