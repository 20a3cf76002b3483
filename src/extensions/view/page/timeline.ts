/**
 * The timeline: one lane per stream (children share a lane when there are many), talks as bars,
 * steps as ticks, segment windows shaded behind them. A quiet period longer than the idle gap is
 * drawn as a narrow labelled gap rather than as empty width, so a day of pauses does not squeeze
 * the work into a line; the label says how long it was. API waits, tool executions and waits for
 * the user are spans of their own under the ticks (timeline-waits.ts).
 */
import type { ViewNode } from '../../../formats/view/types.js';
import { fmtTime, h } from './dom.js';
import type { Model, UiState } from './model.js';
import { WAIT_STYLE, waitsOf, type Wait } from './timeline-waits.js';
import { MCP_COLORS, mcpBars, type McpBar } from './mcp-lane.js';

export interface TimelineHost {
  model(): Model;
  state: UiState;
  select(id: string, opts?: { reveal?: boolean; focus?: boolean }): void;
}

/** The policy's idle gap: a longer pause is drawn compressed, with its length written on it. */
const GAP_MS = 10 * 60 * 1000;
const LEFT = 120,
  RIGHT = 12,
  TOP = 18,
  LANE = 22,
  AXIS = 18,
  MAX_LANES = 8;

const COLORS: Record<string, string> = {
  'message.external': '#58a8ff',
  'message.assistant': '#35c980',
  'agent.output': '#35c980',
  tool: '#f4a641',
  'agent.call': '#f4a641',
  'llm.call': '#ac8cff',
  thinking: '#7c6bb3',
  'runtime.notification': '#ef6eae',
  'error.api': '#ff6f78',
  'message.synthetic': '#ff6f78',
  'agent.launch_ack': '#31c7bd',
  'epoch.boundary': '#31c7bd',
  'epoch.summary': '#31c7bd',
};

/** A pause's length, short enough to sit under it. */
function gapText(ms: number): string {
  const m = Math.round(ms / 60_000);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h}h ${String(m % 60).padStart(2, '0')}m` : `${Math.floor(h / 24)}d ${h % 24}h`;
}

interface Piece {
  t0: number;
  t1: number;
  x0: number;
  x1: number;
  gap: boolean;
}
interface Bar {
  id: string;
  lane: number;
  from: number;
  to: number;
  child: boolean;
  label: string;
}
interface Tick {
  t: number;
  lane: number;
  color: string;
}

export class Timeline {
  readonly el: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private pieces: Piece[] = [];
  private bars: Bar[] = [];
  private ticks: Tick[] = [];
  private waits: Wait[] = [];
  private lanes: string[] = [];
  private mcp: McpBar[] = [];
  /** The MCP lane's index, when the conversation called any MCP server. */
  private mcpLane = -1;
  private laneOf = new Map<string, number>();
  private width = 0;

  constructor(private readonly host: TimelineHost) {
    this.canvas = h('canvas', { tabindex: '0', role: 'img' });
    this.el = h(
      'div',
      {
        class: 'timeline',
        'data-testid': 'timeline',
        title: 'Talks as bars, steps as ticks, segment windows shaded; a pause over 10 minutes is drawn as a narrow ⋯ gap with its length',
      },
      this.canvas,
    );
    this.canvas.addEventListener('click', (e) => this.onClick(e));
    this.canvas.addEventListener('mousemove', (e) => {
      this.canvas.title = (this.mcpAt(e) ?? this.barAt(e))?.label ?? '';
    });
    this.canvas.addEventListener('keydown', (e) => this.onKey(e));
    new ResizeObserver(() => this.draw()).observe(this.el);
  }

  /** Rebuilds lanes, bars, ticks and the time scale from the document. */
  render(): void {
    const m = this.host.model();
    const streams = m.doc.streams;
    this.laneOf.clear();
    if (streams.length <= MAX_LANES) {
      this.lanes = streams.map((s) => (s.name === 'main' ? 'main' : (s.label ?? s.name)));
      streams.forEach((s, i) => this.laneOf.set(s.name, i));
    } else {
      const children = streams.filter((s) => s.role !== 'main');
      this.lanes = ['main', `${children.length} child streams`];
      for (const s of streams) this.laneOf.set(s.name, s.role === 'main' ? 0 : 1);
    }
    if (!this.lanes.length) this.lanes = ['main'];
    this.bars = [];
    this.ticks = [];
    const times: number[] = [];
    const walk = (n: ViewNode, lane: number) => {
      if (n.at !== undefined && n.kind !== 'run' && n.kind !== 'talk') {
        this.ticks.push({ t: n.at, lane, color: COLORS[n.kind] ?? '#6f859f' });
        times.push(n.at);
      }
      for (const c of n.children ?? []) walk(c, lane);
    };
    for (const t of m.doc.talks) {
      const lane = this.laneOf.get(t.stream ?? 'main') ?? 0;
      if (t.from !== undefined) {
        this.bars.push({
          id: t.id,
          lane,
          from: t.from,
          to: t.to ?? t.from,
          child: !!t.child,
          label: `#${m.talkNo.get(t.id)} ${t.label ?? '(no input recorded)'}`,
        });
        times.push(t.from, t.to ?? t.from);
      }
      walk(t, lane);
    }
    for (const l of m.doc.loose) walk(l, this.laneOf.get(l.stream ?? 'main') ?? 0);
    // One lane under the streams for the MCP calls, each a bar from request to result.
    this.mcp = mcpBars(m.doc);
    this.mcpLane = this.mcp.length ? this.lanes.push('MCP') - 1 : -1;
    for (const c of this.mcp) times.push(c.from, c.to);
    this.el.dataset.mcpCalls = String(this.mcp.length);
    for (const s of m.doc.segments) {
      if (s.from !== undefined) times.push(s.from);
      if (s.to !== undefined) times.push(s.to);
    }
    this.waits = waitsOf([...m.nodes.values()].map((e) => e.node));
    for (const w of this.waits) times.push(w.from, w.to);
    this.canvas.dataset.waits = (['api', 'tool', 'user'] as const).map((k) => `${k}:${this.waits.filter((w) => w.kind === k).length}`).join(' ');
    times.sort((a, b) => a - b);
    this.scale(times);
    const talks = m.doc.talks.length;
    this.canvas.setAttribute(
      'aria-label',
      `Timeline: ${talks} talks on ${this.lanes.length} lanes, ${this.pieces.filter((p) => p.gap).length} gaps over 10 minutes` +
        (this.mcp.length ? `, ${this.mcp.length} MCP calls (${this.mcp.filter((c) => c.outcome === 'failed').length} failed)` : '') +
        '. Left and Right arrows select the previous or next talk.',
    );
    this.draw();
  }

  /** Active stretches share the width by duration; each gap gets a fixed narrow column. */
  private scale(times: number[]): void {
    this.pieces = [];
    if (!times.length) return;
    let start = times[0]!,
      prev = times[0]!;
    const spans: { t0: number; t1: number }[] = [];
    for (const t of times) {
      if (t - prev > GAP_MS) {
        spans.push({ t0: start, t1: prev });
        start = t;
      }
      prev = t;
    }
    spans.push({ t0: start, t1: prev });
    for (let i = 0; i < spans.length; i++) {
      if (i) this.pieces.push({ t0: spans[i - 1]!.t1, t1: spans[i]!.t0, x0: 0, x1: 0, gap: true });
      this.pieces.push({ ...spans[i]!, x0: 0, x1: 0, gap: false });
    }
  }

  private layout(width: number): void {
    const w = Math.max(100, width - LEFT - RIGHT);
    const gaps = this.pieces.filter((p) => p.gap).length;
    const gapPx = gaps ? Math.max(4, Math.min(36, (w * 0.3) / gaps)) : 0;
    const active = this.pieces.filter((p) => !p.gap);
    const total = active.reduce((a, p) => a + (p.t1 - p.t0), 0);
    const avail = w - gaps * gapPx;
    const minPx = Math.min(3, avail / Math.max(1, active.length));
    const raw = active.map((p) => (total > 0 ? ((p.t1 - p.t0) / total) * avail : avail / active.length));
    const extra = raw.reduce((a, r) => a + Math.max(0, minPx - r), 0);
    const shrink =
      extra > 0
        ? (avail - extra) /
          Math.max(
            1,
            raw.reduce((a, r) => a + (r > minPx ? r : 0), 0),
          )
        : 1;
    let x = LEFT;
    let k = 0;
    for (const p of this.pieces) {
      p.x0 = x;
      if (p.gap) x += gapPx;
      else {
        const r = raw[k++]!;
        x += r < minPx ? minPx : r * shrink;
      }
      p.x1 = x;
    }
  }

  private x(t: number): number {
    const ps = this.pieces;
    if (!ps.length) return LEFT;
    let lo = 0,
      hi = ps.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ps[mid]!.t1 < t) lo = mid + 1;
      else hi = mid;
    }
    const p = ps[lo]!;
    if (t <= p.t0) return p.x0;
    if (p.t1 === p.t0) return p.x0;
    return p.x0 + ((Math.min(t, p.t1) - p.t0) / (p.t1 - p.t0)) * (p.x1 - p.x0);
  }

  draw(): void {
    const width = this.el.clientWidth;
    if (!width) return;
    this.width = width;
    const height = TOP + this.lanes.length * LANE + AXIS;
    const dpr = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(width * dpr);
    this.canvas.height = Math.round(height * dpr);
    this.canvas.style.height = `${height}px`;
    const g = this.canvas.getContext('2d');
    if (!g) return;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, height);
    g.font = '11px ui-monospace, Menlo, Consolas, monospace';
    g.textBaseline = 'middle';
    this.layout(width);
    const m = this.host.model();
    const laneY = (i: number) => TOP + i * LANE;
    const bottom = TOP + this.lanes.length * LANE;
    g.fillStyle = '#6f859f';
    g.fillText('timeline · UTC', 8, 8);
    if (this.waits.length)
      g.fillText(
        Object.values(WAIT_STYLE)
          .map((st) => st.label)
          .join(' · ') + ' (top to bottom)',
        LEFT + 200,
        8,
      );
    // Lanes.
    this.lanes.forEach((name, i) => {
      g.fillStyle = i % 2 ? '#0b1626' : '#0d1929';
      g.fillRect(LEFT, laneY(i), width - LEFT - RIGHT, LANE);
      g.fillStyle = '#9cb0c7';
      g.fillText(name.length > 16 ? name.slice(0, 15) + '…' : name, 8, laneY(i) + LANE / 2);
    });
    // Segment windows, behind everything.
    for (const s of m.doc.segments) {
      if (s.from === undefined || s.to === undefined) continue;
      const x0 = this.x(s.from),
        x1 = Math.max(this.x(s.to), x0 + 2);
      g.fillStyle = s.state === 'open' ? 'rgba(49,199,189,0.10)' : 'rgba(88,168,255,0.10)';
      g.fillRect(x0, TOP - 4, x1 - x0, bottom - TOP + 4);
      g.fillStyle = 'rgba(49,199,189,0.8)';
      g.fillRect(x0, TOP - 4, x1 - x0, 2);
      if (x1 - x0 > 60) {
        g.fillStyle = '#31c7bd';
        g.fillText(`${s.id.replace(/^segment\//, '')} · ${s.state ?? ''}`, x0 + 3, 8);
      }
    }
    // Gaps, labelled with their length.
    for (const p of this.pieces) {
      if (!p.gap) continue;
      g.fillStyle = '#07111f';
      g.fillRect(p.x0, TOP, p.x1 - p.x0, bottom - TOP);
      g.strokeStyle = '#263b55';
      g.setLineDash([3, 3]);
      g.beginPath();
      g.moveTo(p.x0 + 0.5, TOP);
      g.lineTo(p.x0 + 0.5, bottom);
      g.moveTo(p.x1 - 0.5, TOP);
      g.lineTo(p.x1 - 0.5, bottom);
      g.stroke();
      g.setLineDash([]);
    }
    // Talks.
    const selTalk = this.selectedTalk();
    for (const b of this.bars) {
      const x0 = this.x(b.from),
        x1 = Math.max(this.x(b.to), x0 + 3);
      const y = laneY(b.lane) + 4;
      g.fillStyle = b.child ? 'rgba(172,140,255,0.35)' : 'rgba(88,168,255,0.35)';
      g.fillRect(x0, y, x1 - x0, LANE - 8);
      if (b.id === selTalk) {
        g.strokeStyle = '#e9f0f8';
        g.lineWidth = 1.5;
        g.strokeRect(x0 - 1, y - 1, x1 - x0 + 2, LANE - 6);
        g.lineWidth = 1;
      }
    }
    // MCP calls: a bar per call on their own lane, the selected one outlined.
    for (const c of this.mcp) {
      const x0 = this.x(c.from),
        x1 = Math.max(this.x(c.to), x0 + 3);
      const y = laneY(this.mcpLane) + 5;
      g.fillStyle = MCP_COLORS[c.outcome ?? ''] ?? '#6f859f';
      g.fillRect(x0, y, x1 - x0, LANE - 10);
      if (c.id === this.host.state.selected) {
        g.strokeStyle = '#e9f0f8';
        g.strokeRect(x0 - 1, y - 1, x1 - x0 + 2, LANE - 8);
      }
    }
    // Steps.
    for (const t of this.ticks) {
      const x = Math.round(this.x(t.t)) + 0.5;
      g.strokeStyle = t.color;
      g.beginPath();
      g.moveTo(x, laneY(t.lane) + 6);
      g.lineTo(x, laneY(t.lane) + LANE - 6);
      g.stroke();
    }
    // API waits, tool executions and waits for the user: three rows of spans under the ticks.
    for (const w of this.waits) {
      const st = WAIT_STYLE[w.kind];
      const x0 = this.x(w.from);
      g.fillStyle = st.color;
      g.fillRect(x0, laneY(this.laneOf.get(w.stream) ?? 0) + 3 + st.row * 6, Math.max(this.x(w.to) - x0, 2), 3);
    }
    // The axis: each gap's length under it, then where active stretches start, wherever they fit.
    const taken: [number, number][] = [];
    const put = (text: string, x: number, color: string) => {
      const w = g.measureText(text).width;
      const x0 = Math.max(LEFT, Math.min(x, width - RIGHT - w));
      if (!taken.every(([a, b]) => x0 + w + 6 < a || x0 > b + 6)) return;
      taken.push([x0, x0 + w]);
      g.fillStyle = color;
      g.fillText(text, x0, bottom + AXIS / 2);
    };
    for (const p of this.pieces) {
      if (!p.gap) continue;
      const text = `⋯ ${gapText(p.t1 - p.t0)}`;
      put(text, (p.x0 + p.x1) / 2 - g.measureText(text).width / 2, '#f4a641');
    }
    for (const p of this.pieces) if (!p.gap) put(fmtTime(p.t0).slice(0, 8), p.x0, '#6f859f');
    // The selected node.
    const sel = m.nodes.get(this.host.state.selected ?? '')?.node;
    if (sel?.at !== undefined) {
      const x = Math.round(this.x(sel.at)) + 0.5;
      g.strokeStyle = '#31c7bd';
      g.beginPath();
      g.moveTo(x, TOP - 4);
      g.lineTo(x, bottom);
      g.stroke();
    }
  }

  private selectedTalk(): string | undefined {
    const e = this.host.model().nodes.get(this.host.state.selected ?? '');
    return e?.talk;
  }

  private barAt(e: MouseEvent): Bar | undefined {
    const r = this.canvas.getBoundingClientRect();
    const x = e.clientX - r.left,
      y = e.clientY - r.top;
    const lane = Math.floor((y - TOP) / LANE);
    let best: Bar | undefined,
      dist = Infinity;
    for (const b of this.bars) {
      if (b.lane !== lane) continue;
      const x0 = this.x(b.from),
        x1 = Math.max(this.x(b.to), x0 + 3);
      const d = x < x0 ? x0 - x : x > x1 ? x - x1 : 0;
      if (d < dist) {
        dist = d;
        best = b;
      }
    }
    return dist <= 12 ? best : undefined;
  }

  /** The MCP call under the pointer, on the MCP lane. */
  private mcpAt(e: MouseEvent): McpBar | undefined {
    if (this.mcpLane < 0) return undefined;
    const r = this.canvas.getBoundingClientRect();
    if (Math.floor((e.clientY - r.top - TOP) / LANE) !== this.mcpLane) return undefined;
    const x = e.clientX - r.left;
    return this.mcp.find((c) => x >= this.x(c.from) - 3 && x <= Math.max(this.x(c.to), this.x(c.from) + 3) + 3);
  }

  private onClick(e: MouseEvent): void {
    const call = this.mcpAt(e);
    if (call) return this.host.select(call.id, { reveal: true, focus: false });
    const b = this.barAt(e);
    if (b) this.host.select(b.id, { reveal: false, focus: false });
  }

  private onKey(e: KeyboardEvent): void {
    if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
    const talks = this.host.model().doc.talks;
    if (!talks.length) return;
    const cur = talks.findIndex((t) => t.id === this.selectedTalk());
    const next = cur < 0 ? 0 : Math.max(0, Math.min(talks.length - 1, cur + (e.key === 'ArrowRight' ? 1 : -1)));
    this.host.select(talks[next]!.id, { reveal: false, focus: false });
    e.preventDefault();
  }

  get drawnWidth(): number {
    return this.width;
  }
}
