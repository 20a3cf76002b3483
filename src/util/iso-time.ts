/**
 * Formats many epoch-millisecond times as `Date.toISOString` does, several times faster: the date
 * part is worked out once per day and reused, the clock part is arithmetic. One instance per job
 * (an assembly writes tens of thousands of call and tool times).
 */
const DAY_MS = 86_400_000;
const pad2 = (n: number) => (n < 10 ? '0' : '') + n;
const pad3 = (n: number) => (n < 10 ? '00' : n < 100 ? '0' : '') + n;

export class IsoTimes {
  private readonly days = new Map<number, string>();

  /** `2026-11-30T10:00:01.500Z`; undefined for an absent or invalid time. */
  format(ms: number | undefined): string | undefined {
    if (ms === undefined || !Number.isFinite(ms) || Math.abs(ms) > 8.64e15) return undefined;
    const whole = Math.trunc(ms); // as Date does
    const day = Math.floor(whole / DAY_MS);
    // Years outside 0000–9999 print with a sign: left to the platform.
    if (day < -719_528 || day >= 2_932_897) return new Date(whole).toISOString();
    let prefix = this.days.get(day);
    if (prefix === undefined) this.days.set(day, (prefix = new Date(day * DAY_MS).toISOString().slice(0, 11)));
    let rest = whole - day * DAY_MS;
    const h = Math.floor(rest / 3_600_000);
    rest -= h * 3_600_000;
    const m = Math.floor(rest / 60_000);
    rest -= m * 60_000;
    const s = Math.floor(rest / 1000);
    return `${prefix}${pad2(h)}:${pad2(m)}:${pad2(s)}.${pad3(rest - s * 1000)}Z`;
  }

  /** An RFC 3339 time (a span's, with up to nanoseconds) at millisecond precision, as the document speaks. */
  formatText(rfc3339: string | undefined): string | undefined {
    return rfc3339 === undefined ? undefined : this.format(Date.parse(rfc3339));
  }
}
