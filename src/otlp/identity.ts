/**
 * Who the pushed records say they come from: the resource (service, instance, layer, SDK) and
 * the instrumentation scope, as the wire contract names them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lazy } from '../util/lazy.js';

/** The contract's scope name: a receiver that routes asz records by scope routes ours the same way. */
export const SCOPE_NAME = 'github.com/apache/skywalking-ai-sessionizer';
export const SDK_NAME = 'aszcol';
/** OpenTelemetry's value for Node.js in `telemetry.sdk.language`. */
export const SDK_LANGUAGE = 'nodejs';
export const UNKNOWN_SERVICE = 'unknown_service';

/** This package's version, read once from the package.json above this module (src/ or dist/src/). */
export const aszcolVersion: () => string = lazy(readVersion);

function readVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const p = join(dir, 'package.json');
    if (existsSync(p)) {
      try {
        const pkg = JSON.parse(readFileSync(p, 'utf8')) as { name?: string; version?: string };
        if (pkg.name === 'aszcol' && pkg.version) return pkg.version;
      } catch {
        /* keep looking */
      }
    }
    dir = dirname(dir);
  }
  return '0.0.0';
}

/** `user@host` of this machine: stable across restarts, and what a person reading the receiver recognises. */
export function defaultInstanceId(): string {
  let user = process.env.USER || process.env.LOGNAME || '';
  try {
    user = userInfo().username || user;
  } catch {
    /* no passwd entry (a container's arbitrary uid) */
  }
  return `${user || 'unknown'}@${hostname()}`;
}

/**
 * The runtime that produced a session, named as a receiver lists it, read off a landed header's
 * adapter (`claude-code-local/0.1.0`). Every adapter that reads Claude Code is `Claude Code`.
 */
export function runtimeOfAdapter(adapter: string | undefined): string {
  const name = (adapter ?? '').split('/')[0] ?? '';
  if (name.startsWith('claude-code')) return 'Claude Code';
  if (name === 'mock') return 'Mock Agent';
  return name || UNKNOWN_SERVICE;
}

export interface Identity {
  /** Configured service name; '' names each session's runtime. */
  serviceName: string;
  instanceId: string;
  layer: string;
}

export type Attr = { key: string; value: { stringValue?: string; intValue?: number; boolValue?: boolean; doubleValue?: number } };

export const s = (key: string, v: string): Attr => ({ key, value: { stringValue: v } });
export const i = (key: string, v: number): Attr => ({ key, value: { intValue: v } });

/** The resource of a request's records for one service. */
export function resourceAttributes(id: Identity, service: string): Attr[] {
  return [
    s('service.name', id.serviceName || service),
    s('service.instance.id', id.instanceId || defaultInstanceId()),
    s('service.layer', id.layer),
    s('telemetry.sdk.name', SDK_NAME),
    s('telemetry.sdk.version', aszcolVersion()),
    s('telemetry.sdk.language', SDK_LANGUAGE),
  ];
}

export function scope(): { name: string; version: string } {
  return { name: SCOPE_NAME, version: aszcolVersion() };
}
