import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';

/**
 * A renderer for the subset of Helm's Go templates the aszcol chart uses, because no helm
 * binary exists here: text, `{{ pipeline }}`, `{{- … -}}` whitespace trimming, comments,
 * `if` / `else if` / `else` / `end`, fields of `.Values` `.Release` `.Chart`, string and number
 * literals, parentheses, `|` pipes, and the functions quote, toYaml, indent, nindent, eq, ne,
 * not, and, or, default, required, kindIs. Anything else is an error, so the chart cannot drift into
 * syntax this renderer would get wrong. Unlike helm, a `.Values` path that does not exist is an
 * error too (helm prints nothing), which is what the chart's tests want.
 */

type Node = { t: 'text'; s: string } | { t: 'action'; expr: Expr; src: string } | { t: 'if'; branches: { cond: Expr; body: Node[] }[]; otherwise: Node[] };

type Expr =
  { t: 'field'; path: string[]; root: 'dot' | 'dollar' } | { t: 'lit'; v: unknown } | { t: 'call'; fn: string; args: Expr[] } | { t: 'pipe'; stages: Expr[] };

export interface RenderContext {
  Values: unknown;
  Release: { Name: string; Namespace: string; Service: string };
  Chart: { Name: string; Version: string; AppVersion: string };
}

export class TemplateError extends Error {}

/** Splits template text into text and actions, applying `{{-` / `-}}` trimming. */
function lex(src: string, file: string): ({ t: 'text'; s: string } | { t: 'act'; s: string; line: number })[] {
  const out: ({ t: 'text'; s: string } | { t: 'act'; s: string; line: number })[] = [];
  let i = 0;
  let trimNext = false;
  while (i < src.length) {
    const open = src.indexOf('{{', i);
    let text = src.slice(i, open < 0 ? src.length : open);
    if (trimNext) text = text.replace(/^\s+/, '');
    trimNext = false;
    if (open < 0) {
      out.push({ t: 'text', s: text });
      break;
    }
    const close = src.indexOf('}}', open);
    if (close < 0) throw new TemplateError(`${file}: unclosed action`);
    let inner = src.slice(open + 2, close);
    if (inner.startsWith('- ') || inner === '-') {
      text = text.replace(/\s+$/, '');
      inner = inner.slice(1);
    }
    if (inner.endsWith(' -')) {
      trimNext = true;
      inner = inner.slice(0, -1);
    }
    out.push({ t: 'text', s: text });
    const line = src.slice(0, open).split('\n').length;
    const body = inner.trim();
    if (!(body.startsWith('/*') && body.endsWith('*/'))) out.push({ t: 'act', s: body, line });
    i = close + 2;
  }
  return out.filter((x) => x.t === 'act' || x.s !== '');
}

function tokenize(s: string, where: string): string[] {
  const toks: string[] = [];
  const re = /\s*("(?:[^"\\]|\\.)*"|`[^`]*`|\(|\)|\||[$.A-Za-z0-9_-][$.A-Za-z0-9_-]*)/y;
  let m: RegExpExecArray | null;
  let pos = 0;
  while (pos < s.length) {
    re.lastIndex = pos;
    m = re.exec(s);
    if (!m) {
      if (/^\s*$/.test(s.slice(pos))) break;
      throw new TemplateError(`${where}: cannot read ${JSON.stringify(s.slice(pos))}`);
    }
    toks.push(m[1]!);
    pos = re.lastIndex;
  }
  return toks;
}

const FUNCS = new Set(['quote', 'toYaml', 'indent', 'nindent', 'eq', 'ne', 'not', 'and', 'or', 'default', 'required', 'kindIs']);

function parseExpr(toks: string[], where: string): Expr {
  let i = 0;
  const operand = (): Expr => {
    const tk = toks[i++];
    if (tk === undefined) throw new TemplateError(`${where}: missing operand`);
    if (tk === '(') {
      const inner = pipeline();
      if (toks[i++] !== ')') throw new TemplateError(`${where}: missing )`);
      return inner;
    }
    if (tk.startsWith('"')) return { t: 'lit', v: JSON.parse(tk) };
    if (tk.startsWith('`')) return { t: 'lit', v: tk.slice(1, -1) };
    if (/^-?\d+(\.\d+)?$/.test(tk)) return { t: 'lit', v: Number(tk) };
    if (tk === 'true' || tk === 'false') return { t: 'lit', v: tk === 'true' };
    if (tk === '.') return { t: 'field', path: [], root: 'dot' };
    if (tk.startsWith('.')) return { t: 'field', path: tk.slice(1).split('.'), root: 'dot' };
    if (tk === '$') return { t: 'field', path: [], root: 'dollar' };
    if (tk.startsWith('$.')) return { t: 'field', path: tk.slice(2).split('.'), root: 'dollar' };
    throw new TemplateError(`${where}: unsupported operand ${tk}`);
  };
  const command = (): Expr => {
    const tk = toks[i];
    if (tk !== undefined && /^[A-Za-z]/.test(tk)) {
      if (!FUNCS.has(tk)) throw new TemplateError(`${where}: function ${tk} is not supported by this renderer`);
      i++;
      const args: Expr[] = [];
      while (i < toks.length && toks[i] !== '|' && toks[i] !== ')') args.push(operand());
      return { t: 'call', fn: tk, args };
    }
    return operand();
  };
  const pipeline = (): Expr => {
    const stages = [command()];
    while (toks[i] === '|') {
      i++;
      const c = command();
      if (c.t !== 'call') throw new TemplateError(`${where}: only a function can follow |`);
      stages.push(c);
    }
    return stages.length === 1 ? stages[0]! : { t: 'pipe', stages };
  };
  const e = pipeline();
  if (i !== toks.length) throw new TemplateError(`${where}: unexpected ${toks[i]}`);
  return e;
}

function parseTemplate(src: string, file: string): Node[] {
  const items = lex(src, file);
  let k = 0;
  const block = (stopAt: string[]): { nodes: Node[]; stop: string; stopArg?: string } => {
    const nodes: Node[] = [];
    while (k < items.length) {
      const it = items[k++]!;
      if (it.t === 'text') {
        nodes.push({ t: 'text', s: it.s });
        continue;
      }
      const where = `${file}:${it.line}`;
      const [kw, ...rest] = it.s.split(/\s+/);
      if (kw === 'end' || kw === 'else') {
        if (!stopAt.includes(kw)) throw new TemplateError(`${where}: unexpected ${kw}`);
        return { nodes, stop: kw, stopArg: rest.join(' ') };
      }
      if (kw === 'if') {
        const branches: { cond: Expr; body: Node[] }[] = [];
        let cond = parseExpr(tokenize(rest.join(' '), where), where);
        let otherwise: Node[] = [];
        for (;;) {
          const b = block(['else', 'end']);
          branches.push({ cond, body: b.nodes });
          if (b.stop === 'end') break;
          if (b.stopArg && b.stopArg.startsWith('if ')) {
            cond = parseExpr(tokenize(b.stopArg.slice(3), where), where);
            continue;
          }
          const last = block(['end']);
          otherwise = last.nodes;
          break;
        }
        nodes.push({ t: 'if', branches, otherwise });
        continue;
      }
      if (['range', 'with', 'define', 'template', 'include', 'block'].includes(kw!))
        throw new TemplateError(`${where}: ${kw} is not supported by this renderer`);
      nodes.push({ t: 'action', expr: parseExpr(tokenize(it.s, where), where), src: it.s });
    }
    if (stopAt.length) throw new TemplateError(`${file}: missing {{ end }}`);
    return { nodes, stop: '' };
  };
  return block([]).nodes;
}

function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v as object).length > 0;
  return true;
}

/**
 * The Go kind Helm's kindIs compares against, for a value read from YAML (numbers arrive as
 * float64): tells an empty list from an absent value, which `if` cannot.
 */
function kindOf(v: unknown): string {
  if (v === null || v === undefined) return 'invalid';
  if (Array.isArray(v)) return 'slice';
  if (typeof v === 'object') return 'map';
  if (typeof v === 'number') return 'float64';
  return typeof v === 'boolean' ? 'bool' : 'string';
}

/** Go's %q for the strings a chart quotes. */
const goQuote = (v: unknown) => JSON.stringify(v === null || v === undefined ? '' : String(v));

/** Helm's toYaml: keys sorted (sigs.k8s.io/yaml goes through JSON), no trailing newline. */
export function toYaml(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  return stringify(v, { sortMapEntries: true, lineWidth: 0 }).replace(/\n$/, '');
}

const indentText = (n: number, s: string) =>
  s
    .split('\n')
    .map((l) => ' '.repeat(n) + l)
    .join('\n');

function evaluate(e: Expr, dot: unknown, root: RenderContext, where: string, piped?: { v: unknown }): unknown {
  switch (e.t) {
    case 'lit':
      return e.v;
    case 'field': {
      let cur: unknown = e.root === 'dollar' ? root : dot;
      const walked: string[] = [];
      for (const key of e.path) {
        walked.push(key);
        if (cur === null || typeof cur !== 'object' || !(key in (cur as object))) {
          throw new TemplateError(`${where}: .${walked.join('.')} does not exist`);
        }
        cur = (cur as Record<string, unknown>)[key];
      }
      return cur;
    }
    case 'pipe': {
      let v = evaluate(e.stages[0]!, dot, root, where);
      for (const st of e.stages.slice(1)) v = evaluate(st, dot, root, where, { v });
      return v;
    }
    case 'call': {
      const args = e.args.map((a) => evaluate(a, dot, root, where));
      if (piped) args.push(piped.v);
      const want = (n: number) => {
        if (args.length !== n) throw new TemplateError(`${where}: ${e.fn} takes ${n} argument(s), got ${args.length}`);
      };
      switch (e.fn) {
        case 'quote':
          want(1);
          return goQuote(args[0]);
        case 'toYaml':
          want(1);
          return toYaml(args[0]);
        case 'indent':
          want(2);
          return indentText(Number(args[0]), String(args[1]));
        case 'nindent':
          want(2);
          return '\n' + indentText(Number(args[0]), String(args[1]));
        case 'eq':
          want(2);
          return args[0] === args[1];
        case 'ne':
          want(2);
          return args[0] !== args[1];
        case 'not':
          want(1);
          return !truthy(args[0]);
        case 'and':
          return args.every(truthy) ? args[args.length - 1] : args.find((a) => !truthy(a));
        case 'or':
          return args.find(truthy) ?? args[args.length - 1];
        case 'default':
          want(2);
          return truthy(args[1]) ? args[1] : args[0];
        case 'required':
          want(2);
          if (!truthy(args[1])) throw new TemplateError(`${where}: ${String(args[0])}`);
          return args[1];
        case 'kindIs':
          want(2);
          return args[0] === kindOf(args[1]);
      }
      throw new TemplateError(`${where}: function ${e.fn}`);
    }
  }
}

function run(nodes: Node[], ctx: RenderContext, file: string): string {
  let out = '';
  for (const n of nodes) {
    if (n.t === 'text') out += n.s;
    else if (n.t === 'action') {
      const v = evaluate(n.expr, ctx, ctx, `${file}: {{ ${n.src} }}`);
      out += v === null || v === undefined ? '' : typeof v === 'object' ? toYaml(v) : String(v);
    } else {
      const hit = n.branches.find((b) => truthy(evaluate(b.cond, ctx, ctx, file)));
      out += run(hit ? hit.body : n.otherwise, ctx, file);
    }
  }
  return out;
}

export function renderTemplate(src: string, ctx: RenderContext, file = 'template'): string {
  return run(parseTemplate(src, file), ctx, file);
}

/** Deep merge for `--set`-like overrides: mappings merge, everything else replaces. */
export function mergeValues(base: unknown, over: unknown): unknown {
  if (base && over && typeof base === 'object' && typeof over === 'object' && !Array.isArray(base) && !Array.isArray(over)) {
    const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
    for (const [k, v] of Object.entries(over as Record<string, unknown>)) out[k] = k in out ? mergeValues(out[k], v) : v;
    return out;
  }
  return over === undefined ? base : over;
}

export interface RenderedChart {
  /** `# Source:`-separated documents, as `helm template` prints them. */
  text: string;
  /** Each template's rendering (empty ones left out). */
  files: { name: string; text: string }[];
}

/** Renders every template of a chart directory, like `helm template <release> <chart>`. */
export function renderChart(chartDir: string, opts: { release?: string; namespace?: string; values?: unknown } = {}): RenderedChart {
  const chart = parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as { name: string; version: string; appVersion: string };
  const defaults = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as unknown;
  const ctx: RenderContext = {
    Values: mergeValues(defaults, opts.values ?? {}),
    Release: { Name: opts.release ?? 'aszcol', Namespace: opts.namespace ?? 'default', Service: 'Helm' },
    Chart: { Name: chart.name, Version: String(chart.version), AppVersion: String(chart.appVersion) },
  };
  const dir = join(chartDir, 'templates');
  const files: { name: string; text: string }[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (name.startsWith('_') || !/\.ya?ml$/.test(name)) continue;
    const text = renderTemplate(readFileSync(join(dir, name), 'utf8'), ctx, `templates/${name}`);
    if (text.trim()) files.push({ name, text: text.replace(/^\s*\n/, '').replace(/\s*$/, '\n') });
  }
  return { files, text: files.map((f) => `---\n# Source: ${chart.name}/templates/${f.name}\n${f.text}`).join('') };
}

/** Every `.Values.a.b` path the chart's templates name. */
export function valuesPathsUsed(chartDir: string): { file: string; path: string }[] {
  const out: { file: string; path: string }[] = [];
  const dir = join(chartDir, 'templates');
  for (const name of readdirSync(dir).sort()) {
    const src = readFileSync(join(dir, name), 'utf8');
    for (const m of src.matchAll(/\.Values((?:\.[A-Za-z0-9_]+)+)/g)) out.push({ file: `templates/${name}`, path: m[1]!.slice(1) });
  }
  return out;
}
