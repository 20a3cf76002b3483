/**
 * Calendar keys of a moment in a time zone (day, ISO-ish week start, month) and the date
 * arguments a report takes. Pure; the formatter is built per report, never kept in a module.
 */

export type WeekStart = 'sunday' | 'monday';

const DAY = /^(\d{4})-?(\d{2})-?(\d{2})$/;

/** `YYYY-MM-DD` or ccusage's `YYYYMMDD` → `YYYY-MM-DD`; anything else is refused with the value. */
export function parseDay(value: string, what: string): string {
  const m = DAY.exec(value.trim());
  if (!m) throw new Error(`${what}: "${value}" is not a date (YYYY-MM-DD or YYYYMMDD)`);
  const iso = `${m[1]}-${m[2]}-${m[3]}`;
  const d = new Date(`${iso}T00:00:00Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== iso) throw new Error(`${what}: "${value}" is not a day of the calendar`);
  return iso;
}

/** A time zone the runtime knows (`UTC`, `Europe/Berlin`); the machine's own when none is given. */
export function checkTimeZone(tz: string | undefined): string {
  const zone = tz ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  try {
    new Intl.DateTimeFormat('en-CA', { timeZone: zone });
  } catch {
    throw new Error(`--timezone: "${zone}" is not a time zone this runtime knows (an IANA name such as UTC or Europe/Berlin)`);
  }
  return zone;
}

export class Calendar {
  private readonly fmt: Intl.DateTimeFormat;
  constructor(
    readonly timeZone: string,
    private readonly weekStart: WeekStart = 'sunday',
  ) {
    this.fmt = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
  }

  day(ms: number): string {
    const parts = this.fmt.formatToParts(new Date(ms));
    const get = (t: string) => parts.find((p) => p.type === t)?.value ?? '00';
    return `${get('year')}-${get('month')}-${get('day')}`;
  }

  month(ms: number): string {
    return this.day(ms).slice(0, 7);
  }

  /** The day the week of `ms` starts on, in the zone. */
  week(ms: number): string {
    const d = new Date(`${this.day(ms)}T00:00:00Z`);
    const back = this.weekStart === 'sunday' ? d.getUTCDay() : (d.getUTCDay() + 6) % 7;
    return new Date(d.getTime() - back * 86_400_000).toISOString().slice(0, 10);
  }
}
