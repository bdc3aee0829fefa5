/**
 * The import rule (scripts/check-imports.ts): src/ stays framework-free, adapters use only the public API.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkImports, findImportViolations } from '../scripts/check-imports.js';

const specifiers = (file: string, text: string): string[] => findImportViolations(file, text).map((v) => v.specifier);

describe('import rule: src/ imports no framework', () => {
  it.each([
    "import express from 'express';",
    "import type { Context } from 'koa';",
    "import fastify from 'fastify';",
    "import formbody from '@fastify/formbody';",
    "import Router from '@koa/router';",
    "import mount from 'koa-mount';",
    "import Redis from 'ioredis';",
    "export { json } from 'express';",
    "const m = await import('fastify');",
    "const e = require('express');",
    'type R = import("express").Request;',
  ])('refuses %s', (line) => {
    expect(findImportViolations('src/token/x.ts', line)).toHaveLength(1);
  });

  it('reports file, line and reason', () => {
    const [violation] = findImportViolations('src/a.ts', "import { z } from 'zod';\nimport express from 'express';\n");
    expect(violation).toMatchObject({ file: 'src/a.ts', line: 2, specifier: 'express' });
    expect(violation?.reason).toMatch(/framework/);
  });

  it('allows dependencies, node built-ins and look-alike names', () => {
    expect(
      specifiers(
        'src/a.ts',
        "import { z } from 'zod';\nimport { createHash } from 'node:crypto';\nimport x from 'expressive';\nimport './koala.js';",
      ),
    ).toEqual([]);
  });

  it('allows `import type` from ioredis only in src/stores/redis.ts', () => {
    expect(specifiers('src/stores/redis.ts', "import type { Redis } from 'ioredis';")).toEqual([]);
    expect(specifiers('src/stores/redis.ts', "import { type Redis, type Cluster } from 'ioredis';")).toEqual([]);
    expect(specifiers('src/stores/redis.ts', "import Redis from 'ioredis';")).toEqual(['ioredis']);
    expect(specifiers('src/stores/redis.ts', "import 'ioredis';")).toEqual(['ioredis']);
    expect(specifiers('src/stores/memory.ts', "import type { Redis } from 'ioredis';")).toEqual(['ioredis']);
    expect(specifiers('src/stores/redis.ts', "import type { FastifyInstance } from 'fastify';")).toEqual(['fastify']);
  });
});

describe('import rule: adapters use the public API', () => {
  it('allows the public entry, the three shared core modules, the shared Node reader, own files and packages', () => {
    const text = [
      "import { createSentinel, type Sentinel } from '../../src/index.js';",
      "import { expectationsReader } from '../../src/guard/bearer-request.js';",
      "import { assertKnownKeys } from '../../src/lib/strict-options.js';",
      "import { isMountPath } from '../../src/http/mount-path.js';",
      "import { fromNodeRequest } from '../node/index.js';",
      "import { helper } from './helper.js';",
      "import type { Context } from 'koa';",
    ].join('\n');
    expect(specifiers('adapters/koa/index.ts', text)).toEqual([]);
    expect(
      specifiers('adapters/koa/sub/thing.ts', "import { x } from '../../../src/index.js';\nimport { y } from '../../node/body.js';"),
    ).toEqual([]);
  });

  it('refuses core internals and other adapters', () => {
    expect(specifiers('adapters/express/index.ts', "import { readForm } from '../../src/http/form-body.js';")).toEqual([
      '../../src/http/form-body.js',
    ]);
    expect(specifiers('adapters/fetch/index.ts', "export { toKoa } from '../koa/index.js';")).toEqual(['../koa/index.js']);
    expect(specifiers('adapters/fetch/index.ts', "import { x } from '../../src/lib/random-secrets.js';")).toEqual([
      '../../src/lib/random-secrets.js',
    ]);
    expect(specifiers('adapters/koa/sub/thing.ts', "import { y } from '../../../src/http/messages.js';")).toEqual([
      '../../../src/http/messages.js',
    ]);
  });
});

describe('import rule: this repository', () => {
  it('holds for every file under src/ and adapters/', () => {
    const root = fileURLToPath(new URL('..', import.meta.url));
    expect(checkImports(root)).toEqual([]);
  });
});
