/**
 * The document builder: a fold and a reader of landed records in, an `asz.view` document out.
 * Pure: it reads nothing but what it is given, so the same head round over the same files gives
 * the same document. Verification (rounds, files) is done by whoever reads the disk and handed
 * in as content, never thrown.
 */
import type { EntityFrame, Ref } from '../session-flow/types.js';
import { STRUCTURE_KINDS } from '../session-flow/types.js';
import type { SdRecord } from '../session-data/types.js';
import { mergeByTime, type Placed } from './order.js';
import { telemetrySummary } from './figures.js';
import type { ViewInput } from './input.js';
import { nodeText, partText, recordText } from './text.js';
import {
  MAX_TREE_DEPTH,
  VIEW_FORMAT,
  VIEW_VERSION,
  type Edge,
  type OpenedBy,
  type ViewDocument,
  type ViewNode,
  type ViewRef,
  type ViewRelation,
  type ViewSegment,
  type ViewStream,
  type ViewUnresolved,
  type ViewUsage,
} from './types.js';

type NodeFrame = Extract<EntityFrame, { t: 'node' }>;
type RelFrame = Extract<EntityFrame, { t: 'relation' }>;
type UnresFrame = Extract<EntityFrame, { t: 'unresolved' }>;

export type { RecordReader, ViewInput } from './input.js';

/** Kinds whose node stands on no one part: they show no text and copy no flags. */
const NO_TEXT_KINDS: ReadonlySet<string> = new Set([...STRUCTURE_KINDS, 'llm.call']);
/** Kinds a talk's label falls back to, and those its reply is read from. */
const REPLY_KINDS: ReadonlySet<string> = new Set(['message.assistant', 'agent.output']);
const TOOL_KINDS: ReadonlySet<string> = new Set(['tool', 'agent.call']);
/** Parents that hold no run or step: a step under one of these is loose. */
const HOLDERS: ReadonlySet<string> = new Set(['session', 'stream', 'epoch', 'segment']);

const cmpStr = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const viewRef = (r: Ref): ViewRef => (r.block === undefined ? { seq: r.seq, row: r.row } : { seq: r.seq, row: r.row, block: r.block });

function isoMs(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.floor(t);
}

function sortedCounts(m: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of [...m.keys()].sort(cmpStr)) out[k] = m.get(k)!;
  return out;
}

/**
 * Prepared once per fold: the containment index, every relation in time order, and each node's
 * edges. `talk(id)` then builds one talk's tree; `document()` builds the whole.
 */
export class ViewModel {
  readonly nodes = new Map<string, NodeFrame>();
  private readonly kids = new Map<string, NodeFrame[]>();
  private readonly relations: RelFrame[];
  private readonly edges = new Map<string, Edge[]>();
  private readonly segmentOf = new Map<string, string>();
  private readonly times = new Map<SdRecord, number | null>();
  readonly talkIds: string[];

  constructor(private readonly input: ViewInput) {
    const rels: RelFrame[] = [];
    for (const e of input.fold.entities.values()) {
      if (e.t === 'node') this.nodes.set(e.id, e);
      else if (e.t === 'relation') rels.push(e);
    }
    for (const n of this.nodes.values()) {
      if (!n.parent) continue;
      const l = this.kids.get(n.parent);
      if (l) l.push(n);
      else this.kids.set(n.parent, [n]);
    }
    // Containment is in record order: landed position, a node on the whole record before those on its parts.
    for (const l of this.kids.values()) {
      l.sort((a, b) => {
        const ra = a.ref,
          rb = b.ref;
        if (ra && rb) {
          const d = ra.seq - rb.seq || ra.row - rb.row || (ra.block ?? -1) - (rb.block ?? -1);
          if (d) return d;
        } else if (ra || rb) return ra ? -1 : 1;
        return cmpStr(a.id, b.id);
      });
    }
    this.relations = mergeByTime(rels.map((r) => this.placeEvidence(r, r.evidence ?? [])));
    // Edges in the order the relations happened, at both ends, so a reader draws flow without searching.
    for (const r of this.relations) {
      this.addEdge(r.from!, { type: r.type!, other: r.to!, dir: 'out', quality: r.quality!, via: r.via! });
      this.addEdge(r.to!, { type: r.type!, other: r.from!, dir: 'in', quality: r.quality!, via: r.via! });
      if (r.type === 'in_segment' && !this.segmentOf.has(r.from!)) this.segmentOf.set(r.from!, r.to!);
    }
    const talks = [...this.nodes.values()].filter((n) => n.kind === 'talk');
    this.talkIds = mergeByTime(talks.map((t) => this.placeNode(t, t.id))).map((t) => t.id);
  }

  private addEdge(id: string, e: Edge): void {
    const l = this.edges.get(id);
    if (l) l.push(e);
    else this.edges.set(id, [e]);
  }

  private record(r: Ref | undefined): SdRecord | undefined {
    return r ? this.input.records.record(r.seq, r.row) : undefined;
  }

  /** A record's time in unix ms, rounded down; undefined when it carries none. */
  private time(rec: SdRecord | undefined): number | undefined {
    if (!rec) return undefined;
    let t = this.times.get(rec);
    if (t === undefined) {
      t = isoMs(rec.time) ?? null;
      this.times.set(rec, t);
    }
    return t ?? undefined;
  }

  private placeAt<T>(item: T, r: Ref | undefined, id: string): Placed<T> {
    if (!r) return { item, lane: '', seq: Infinity, row: 0, block: 0, id };
    return { item, lane: this.input.records.lane(r.seq), seq: r.seq, row: r.row, block: r.block ?? -1, time: this.time(this.record(r)), id };
  }

  private placeNode<T>(item: T & { ref?: Ref }, id: string): Placed<T> {
    return this.placeAt(item, item.ref, id);
  }

  /** An item several records support happened at the earliest of them. */
  private placeEvidence<T>(item: T & { id: string }, refs: Ref[]): Placed<T> {
    let best: Placed<T> | undefined;
    for (const r of refs) {
      const p = this.placeAt(item, r, item.id);
      if (!best) best = p;
      else if (p.time !== undefined && (best.time === undefined || p.time < best.time)) best = p;
      else if (p.time === best.time && p.lane === best.lane && (p.seq < best.seq || (p.seq === best.seq && p.row < best.row))) best = p;
    }
    return best ?? this.placeAt(item, undefined, item.id);
  }

  private children(id: string): NodeFrame[] {
    return this.kids.get(id) ?? [];
  }

  /** The talk a node sits in, walking containment upward (bounded, so corrupt data cannot loop). */
  talkOf(id: string): string | undefined {
    let cur = this.nodes.get(id);
    for (let hops = 0; cur && hops < 64; hops++) {
      if (cur.kind === 'talk') return cur.id;
      cur = cur.parent ? this.nodes.get(cur.parent) : undefined;
    }
    return undefined;
  }

  /** One node and its subtree, `depth` levels below the tree's root. */
  private build(n: NodeFrame, depth: number): ViewNode {
    const kind = n.kind!;
    const v: ViewNode = { id: n.id, kind };
    if (n.parent) v.parent = n.parent;
    if (n.stream) v.stream = n.stream;
    const rec = this.record(n.ref);
    const at = this.time(rec);
    if (at !== undefined) v.at = at;
    if (n.ref) v.ref = viewRef(n.ref);
    if (n.refs?.length) v.refs = n.refs.map(viewRef);
    if (n.attrs && Object.keys(n.attrs).length) v.attrs = n.attrs;
    if (rec && !NO_TEXT_KINDS.has(kind)) {
      const t = nodeText(rec, n.ref!.block);
      if (t.text !== undefined) v.text = t.text;
      if (t.state !== undefined) v.state = t.state;
      if (t.bytes !== undefined) v.bytes = t.bytes;
    }
    if (kind === 'llm.call') {
      const usage = this.usage(n);
      if (usage) v.usage = usage;
    }
    if (rec && !NO_TEXT_KINDS.has(kind)) {
      if (rec.flags?.length) v.flags = rec.flags;
      if (rec.dropped?.length) v.dropped = rec.dropped.map((d) => (d.why ? { what: d.what, bytes: d.bytes, why: d.why } : { what: d.what, bytes: d.bytes }));
    }
    let children: ViewNode[] | undefined;
    if (depth < MAX_TREE_DEPTH) {
      const kids = this.children(n.id);
      if (kids.length) children = kids.map((k) => this.build(k, depth + 1));
    }
    if (kind === 'talk') this.talkExtras(n, v, rec, children ?? []);
    if (TOOL_KINDS.has(kind)) this.toolExtras(n, v, rec, at);
    if (children) v.children = children;
    const edges = this.edges.get(n.id);
    if (edges) v.edges = edges;
    return v;
  }

  /** The token counts of the one record `usage_at` names; a count of zero is left out. */
  private usage(n: NodeFrame): ViewUsage | undefined {
    const at = n.attrs?.usage_at as Ref | undefined;
    if (!at || typeof at !== 'object') return undefined;
    const u = this.record(at)?.usage;
    if (!u) return undefined;
    const out: ViewUsage = {};
    if (u.in) out.in = u.in;
    if (u.out) out.out = u.out;
    if (u.cache_read) out.cache_read = u.cache_read;
    if (u.cache_write) out.cache_write = u.cache_write;
    return Object.keys(out).length ? out : undefined;
  }

  private talkExtras(n: NodeFrame, v: ViewNode, rec: SdRecord | undefined, children: ViewNode[]): void {
    let label: string | undefined;
    let reply: { text: string; ref: ViewRef } | undefined;
    const injections: ViewNode[] = [];
    let steps = 0,
      tools = 0;
    let from = v.at,
      to = v.at;
    const walk = (xs: ViewNode[]) => {
      for (const x of xs) {
        if (!STRUCTURE_KINDS.has(x.kind)) steps++;
        if (TOOL_KINDS.has(x.kind)) tools++;
        if (x.at !== undefined) {
          if (from === undefined || x.at < from) from = x.at;
          if (to === undefined || x.at > to) to = x.at;
        }
        if (x.kind === 'message.external' && label === undefined && x.text) label = x.text;
        if (x.kind === 'context.injection' && injections.length < 3) injections.push(x);
        if (REPLY_KINDS.has(x.kind) && x.text && x.ref) {
          const r = x.ref;
          if (
            !reply ||
            r.seq > reply.ref.seq ||
            (r.seq === reply.ref.seq && (r.row > reply.ref.row || (r.row === reply.ref.row && (r.block ?? -1) >= (reply.ref.block ?? -1))))
          )
            reply = { text: x.text, ref: r };
        }
        if (x.children) walk(x.children);
      }
    };
    walk(children);
    // No person's input: a child's talk opens on what its parent asked, which is the talk's own record.
    if (label === undefined && rec?.from === 'external') {
      const t = recordText(rec);
      if (t.readable && t.text?.trim()) label = t.text;
    }
    // Else the first readable text among the first three injections; the JSON of a data part says nothing of the work.
    if (label === undefined) {
      for (const x of injections) {
        const r = this.record(x.ref);
        const t = r ? recordText(r) : undefined;
        if (t?.readable && t.text?.trim()) {
          label = t.text;
          break;
        }
      }
    }
    if (label !== undefined) v.label = label;
    if (reply) v.reply = reply.text;
    v.runs = children.filter((c) => c.kind === 'run').length;
    if (steps) v.steps = steps;
    if (tools) v.tools = tools;
    if (from !== undefined) v.from = from;
    if (to !== undefined) v.to = to;
    if (n.stream && this.nodes.get(`stream/${n.stream}`)?.attrs?.role === 'child') v.child = true;
    const seg = this.segmentOf.get(n.id);
    if (seg) v.segment = seg;
  }

  private toolExtras(n: NodeFrame, v: ViewNode, rec: SdRecord | undefined, at: number | undefined): void {
    const request = rec && n.ref?.block !== undefined ? rec.parts[n.ref.block] : undefined;
    const name = typeof n.attrs?.name === 'string' ? n.attrs.name : request?.name;
    if (name) v.name = name;
    let failed = request?.failed;
    let result: string | undefined, state: string | undefined, bytes: number | undefined;
    const later = (n.refs ?? []).slice(1);
    for (const r of later) {
      const res = this.record(r);
      if (!res) continue;
      const part = r.block !== undefined ? res.parts[r.block] : res.parts.find((p) => p.k === 'result');
      if (!part) continue;
      if (failed === undefined && part.failed !== undefined) failed = part.failed;
      const t = partText(part);
      state = t.state;
      bytes = t.bytes;
      if (t.text !== undefined) {
        result = t.text;
        break;
      }
    }
    if (failed !== undefined) v.failed = failed;
    if (result !== undefined) v.result = result;
    if (state !== undefined) v.result_state = state;
    if (bytes !== undefined) v.result_bytes = bytes;
    // The time between two records the runtime wrote, only where the join is exact: not how long the tool ran.
    if (n.attrs?.result_join === 'exact_unique' && at !== undefined && later[0]) {
      const rt = this.time(this.record(later[0]));
      if (rt !== undefined && rt >= at) {
        const ms = rt - at;
        if (ms >= 1) v.request_to_result_ms = ms;
        v.request_to_result_join = 'exact_unique';
      }
    }
  }

  /** One talk's tree, as the document holds it. */
  talk(id: string): ViewNode | undefined {
    const n = this.nodes.get(id);
    return n && n.kind === 'talk' ? this.build(n, 0) : undefined;
  }

  private looseRoots(): NodeFrame[] {
    const out: NodeFrame[] = [];
    for (const n of this.nodes.values()) {
      if (HOLDERS.has(n.kind!) || n.kind === 'talk') continue;
      const p = n.parent ? this.nodes.get(n.parent) : undefined;
      if (!p || HOLDERS.has(p.kind!)) out.push(n);
    }
    return mergeByTime(out.map((n) => this.placeNode(n, n.id)));
  }

  private streams(talks: ViewNode[]): ViewStream[] {
    const firstTalk = new Map<string, string>();
    for (const t of talks) if (t.stream && !firstTalk.has(t.stream)) firstTalk.set(t.stream, t.id);
    const steps = new Map<string, number>();
    for (const n of this.nodes.values()) if (n.stream && !STRUCTURE_KINDS.has(n.kind!)) steps.set(n.stream, (steps.get(n.stream) ?? 0) + 1);
    const opened = new Map<string, RelFrame[]>();
    for (const r of this.relations) if (r.type === 'starts') (opened.get(r.to!) ?? opened.set(r.to!, []).get(r.to!)!).push(r);
    const streams = [...this.nodes.values()].filter((n) => n.kind === 'stream');
    const order = mergeByTime(
      streams.map((s) => {
        const first = s.ref ?? this.nodes.get(`epoch/${s.stream ?? s.id.slice(7)}/0`)?.ref;
        return this.placeAt(s, first, s.id);
      }),
    );
    order.sort((a, b) => (a.attrs?.role === 'main' ? 0 : 1) - (b.attrs?.role === 'main' ? 0 : 1)); // stable: main first, the rest in time order
    return order.map((s) => {
      const name = s.stream ?? s.id.replace(/^stream\//, '');
      const openedBy: OpenedBy[] = (opened.get(s.id) ?? []).map((r) => {
        const o: OpenedBy = { step: r.from!, quality: r.quality! };
        const step = this.nodes.get(r.from!);
        const talk = this.talkOf(r.from!);
        return { step: o.step, ...(step?.stream ? { stream: step.stream } : {}), ...(talk ? { talk } : {}), quality: o.quality };
      });
      const label = typeof s.attrs?.label === 'string' && s.attrs.label ? s.attrs.label : undefined;
      // The stream whose step started it; else the agent its sidecar says nested it.
      const parent = openedBy[0]?.stream ?? (typeof s.attrs?.started_by === 'string' ? s.attrs.started_by : undefined);
      const talk = firstTalk.get(name);
      return {
        id: s.id,
        name,
        role: String(s.attrs?.role ?? 'unknown'),
        ...(label ? { label } : {}),
        ...(parent ? { parent } : {}),
        records: this.input.recordsByStream?.get(name) ?? 0,
        steps: steps.get(name) ?? 0,
        ...(talk ? { talk } : {}),
        opened_by: openedBy,
      };
    });
  }

  private segments(talks: ViewNode[]): ViewSegment[] {
    const span = new Map<string, { from?: number; to?: number; talks: number }>();
    for (const t of talks) {
      if (!t.segment) continue;
      const s = span.get(t.segment) ?? { talks: 0 };
      s.talks++;
      if (t.from !== undefined && (s.from === undefined || t.from < s.from)) s.from = t.from;
      if (t.to !== undefined && (s.to === undefined || t.to > s.to)) s.to = t.to;
      span.set(t.segment, s);
    }
    const segs = [...this.nodes.values()].filter((n) => n.kind === 'segment');
    return mergeByTime(segs.map((s) => this.placeNode(s, s.id))).map((s) => {
      const a = s.attrs ?? {};
      const sp = span.get(s.id);
      return {
        id: s.id,
        ...(typeof a.state === 'string' ? { state: a.state } : {}),
        ...(typeof a.committable === 'boolean' ? { committable: a.committable } : {}),
        talks: typeof a.talks === 'number' ? a.talks : (sp?.talks ?? 0),
        ...(sp?.from !== undefined ? { from: sp.from } : {}),
        ...(sp?.to !== undefined ? { to: sp.to } : {}),
        ...(Array.isArray(a.gates_unmet) ? { gates_unmet: a.gates_unmet as string[] } : {}),
      };
    });
  }

  document(): ViewDocument {
    const { fold, conversation } = this.input;
    const talks = this.talkIds.map((id) => this.build(this.nodes.get(id)!, 0));
    const loose = this.looseRoots().map((n) => this.build(n, 0));
    const kinds = new Map<string, number>(),
      relTypes = new Map<string, number>(),
      quality = new Map<string, number>();
    let steps = 0;
    const sessions: string[] = [];
    let sessionNode: NodeFrame | undefined;
    for (const n of this.nodes.values()) {
      kinds.set(n.kind!, (kinds.get(n.kind!) ?? 0) + 1);
      if (!STRUCTURE_KINDS.has(n.kind!)) steps++;
      if (n.kind === 'session') {
        sessions.push(n.id.replace(/^session\//, ''));
        sessionNode ??= n;
      }
    }
    for (const r of this.relations) {
      relTypes.set(r.type!, (relTypes.get(r.type!) ?? 0) + 1);
      quality.set(r.quality!, (quality.get(r.quality!) ?? 0) + 1);
    }
    const unresolved: ViewUnresolved[] = [];
    let open = 0;
    for (const e of fold.entities.values()) {
      if (e.t !== 'unresolved') continue;
      const u = e as UnresFrame;
      unresolved.push({ id: u.id, kind: u.kind!, ref: u.ref!, reason: u.reason!, state: u.state! });
      if (u.state === 'open') open++;
    }
    unresolved.sort((a, b) => cmpStr(a.id, b.id));
    const title = fold.head?.title ?? (typeof sessionNode?.attrs?.title === 'string' ? sessionNode.attrs.title : undefined);
    const from = isoMs(sessionNode?.attrs?.from_time) ?? isoMs(fold.head?.session_from_time);
    const to = isoMs(sessionNode?.attrs?.through_time) ?? isoMs(fold.head?.session_through_time);
    const relations: ViewRelation[] = this.relations.map((r) => ({
      id: r.id,
      type: r.type!,
      from: r.from!,
      to: r.to!,
      quality: r.quality!,
      via: r.via!,
      evidence: (r.evidence ?? []).map(viewRef),
    }));
    const doc: ViewDocument = {
      format: VIEW_FORMAT,
      version: VIEW_VERSION,
      conversation,
      sessions: sessions.sort(cmpStr),
      head: { round: fold.rounds, digest: fold.headDigest ?? '' },
      ...(fold.head?.parser ? { parser: fold.head.parser } : {}),
      ...(fold.head?.policy ? { policy: fold.head.policy } : {}),
      summary: {
        ...(title ? { title } : {}),
        state: this.input.state,
        problems: this.input.problems,
        talks: kinds.get('talk') ?? 0,
        steps,
        streams: kinds.get('stream') ?? 0,
        segments: kinds.get('segment') ?? 0,
        rounds: this.input.rounds.length,
        unresolved: open,
        ...(from !== undefined ? { from } : {}),
        ...(to !== undefined ? { to } : {}),
        ...telemetrySummary(sessionNode?.attrs),
        kinds: sortedCounts(kinds),
        relation_types: sortedCounts(relTypes),
        quality: sortedCounts(quality),
      },
      rounds: this.input.rounds,
      files: this.input.files,
      streams: this.streams(talks),
      segments: this.segments(talks),
      talks,
      loose,
      relations,
      unresolved,
    };
    return doc;
  }
}

export function buildView(input: ViewInput): ViewDocument {
  return new ViewModel(input).document();
}
