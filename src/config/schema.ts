/**
 * The configuration's JSON Schema. Sections whose components have not landed yet accept any
 * mapping; every section that has landed refuses unknown keys.
 */
const duration = { anyOf: [{ type: 'string' }, { type: 'number', minimum: 0 }] };
const bytes = { anyOf: [{ type: 'string' }, { type: 'integer', minimum: 0 }] };

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    storage: {
      type: 'object',
      additionalProperties: false,
      properties: { root: { type: 'string', minLength: 1 } },
    },
    receivers: {
      type: 'object',
      additionalProperties: { type: ['object', 'null'] },
      properties: {
        claude_code_local: {
          type: ['object', 'null'],
          additionalProperties: false,
          properties: {
            source_root: { type: 'string' },
            include: { type: 'array', items: { type: 'string', minLength: 1 } },
            exclude: { type: 'array', items: { type: 'string', minLength: 1 } },
            interval: duration,
            max_delta_bytes: bytes,
            workers: { type: 'integer', minimum: 0, maximum: 64 },
          },
        },
      },
    },
    processors: { type: ['object', 'null'] },
    exporters: { type: ['object', 'null'] },
    extensions: { type: ['object', 'null'] },
    service: { type: ['object', 'null'] },
  },
} as const;
