// Scenario: 10,000 generated malformed requests across every endpoint, sent over real HTTP to the compiled
// API running as its own process. fast-check builds them from valid bodies of each endpoint (both request
// forms of verify and settle, the x402 routes when the OpenAPI document lists them, status, webhook and
// queue routes) and then breaks them: missing fields, wrong types, huge strings, deep nesting, bad hex,
// numbers beyond uint256, unicode (emoji, RTL, NUL, lone surrogates), random JSON, non-JSON text, wrong
// content types and encodings, empty bodies, bad ids and queries. Every answer must be a 4xx in the shape of
// the API it hit: the error envelope on /v1 and the rest, x402's own shape on /x402 (`isValid`/`invalidReason`
// from /x402/verify, `success`/`errorReason` from /x402/settle, `errorReason` elsewhere), whoever refused it
// (the JSON parser, the router, a limiter, the route); a served path asked with another method is a 405 with
// `Allow`; a body that happens to stay valid may get its 2xx, counted apart. The process must stay up and keep serving, and its memory (heap and
// RSS, read after a forced full GC every 1,000 answers) must not grow with the number of requests.
//
// Reproduce a run with MALFORMED_SEED=<seed from the report>; MALFORMED_REQUESTS changes the count.
import { createHash } from 'node:crypto';
import { gzipSync, deflateSync } from 'node:zlib';
import http from 'node:http';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { equals } from '@jest/expect-utils';
import { startDevnet, type Devnet } from '@facilitator/evm-devnet';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { deleteStackQueues, PRICE_UNITS, stackEnv } from '../support/test-stack';
import { startApiProcess, type ApiProcess } from '../support/api-process';
import { ScenarioReport } from './scenario-report';
import { setTimeout as sleep } from 'node:timers/promises';

const TOTAL = Number(process.env.MALFORMED_REQUESTS ?? 10_000);
const SEED = Number(process.env.MALFORMED_SEED ?? Math.floor(Math.random() * 2 ** 31));
const CONCURRENCY = 16;
const BATCH = 250; // cases are generated this many at a time, so huge bodies never pile up
const REQUEST_TIMEOUT_MS = 15_000;
const MAX_BODY_BYTES = 65_536; // the default MAX_BODY_BYTES
// Memory is compared from BASELINE on: the first answers warm the process up (JIT, pools, caches).
const WARM_UP = Math.round(TOTAL * 0.1);
const BASELINE = Math.round(TOTAL * 0.2);
const MIDDLE = Math.round(TOTAL * 0.6);
/**
 * Memory bounds. Every 1,000 answers the test forces a full GC in the API process (through the inspector)
 * and then reads its heap and its RSS (VmRSS), so what is measured is memory still held, not garbage V8 has
 * not collected yet (without the forced GC, RSS swings by 20-70 MiB with GC timing alone). Observed over the
 * 8,000 requests after the 2,000th: heap used within ±1.5 MiB, RSS within ±4 MiB. So heap used may grow at
 * most 6 MiB (a leak of 0.8 KiB per request would exceed it) and RSS at most 24 MiB (3.1 KiB per request)
 * from the 2,000th answer to the last, and the second half of that stretch may add at most 12 MiB of RSS
 * (a plateau adds ~0; a leak adds as much in each half as in the other).
 */
const MAX_HEAP_GROWTH_MIB = 6;
const MAX_RSS_GROWTH_MIB = 24;
const MAX_SECOND_HALF_RSS_GROWTH_MIB = 12;
const ALLOWED_4XX = [400, 401, 404, 405, 409, 413, 415, 422, 429];
const KNOWN_CODES = new Set([
  'verification_failed',
  'insufficient_allowance',
  'fee_collection_failed',
  'settlement_failed',
  'not_found',
  'method_not_allowed',
  'invalid_request',
  'unsupported_network',
  'unauthorized',
  'idempotency_key_in_flight',
  'idempotency_key_reused',
  'payload_too_large',
  'rate_limited',
]);

const report = new ScenarioReport(
  'malformed-requests',
  'Malformed requests: every answer a 4xx in its API\'s shape, the process stays up, memory flat',
  `${TOTAL.toLocaleString('en')} requests generated with fast-check from valid bodies of every endpoint, then broken (missing fields, wrong types, huge strings, deep nesting, bad hex, numbers beyond uint256, unicode, random JSON, non-JSON text, wrong content types and encodings, bad ids and queries), ${CONCURRENCY} at a time over keep-alive HTTP to the compiled API process`,
);

// ---------------------------------------------------------------------------------------------------------
// JSON values and paths

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Path = Array<string | number>;

function isObject(v: unknown): v is { [key: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Every path into `value` (the root is []), depth first. */
function pathsOf(value: Json, at: Path = [], out: Path[] = []): Path[] {
  out.push(at);
  if (Array.isArray(value)) value.forEach((v, i) => pathsOf(v, [...at, i], out));
  else if (isObject(value)) for (const k of Object.keys(value)) pathsOf(value[k], [...at, k], out);
  return out;
}

function getAt(root: Json, p: Path): Json {
  let node: Json = root;
  for (const k of p) node = (node as Record<string | number, Json>)[k];
  return node;
}

/** Sets (as an own property, so "__proto__" is a plain key) or, with `remove`, deletes. Returns the new root. */
function setAt(root: Json, p: Path, value: Json | undefined): Json {
  if (p.length === 0) return value === undefined ? {} : value;
  const parent = getAt(root, p.slice(0, -1)) as Record<string | number, Json>;
  const key = p[p.length - 1];
  if (value === undefined) {
    if (Array.isArray(parent)) parent.splice(Number(key), 1);
    else delete parent[key];
  } else {
    Object.defineProperty(parent, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return root;
}

/** A copy that keeps "__proto__" own keys (structuredClone would too, but this is explicit). */
function clone(value: Json): Json {
  if (Array.isArray(value)) return value.map(clone);
  if (isObject(value)) {
    const out: Record<string, Json> = {};
    for (const k of Object.keys(value)) Object.defineProperty(out, k, { value: clone(value[k]), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return value;
}

const pick = <T>(items: readonly T[], n: number): T | undefined => (items.length === 0 ? undefined : items[n % items.length]);

// ---------------------------------------------------------------------------------------------------------
// Requests

interface Case {
  endpoint: string;
  mutation: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  chunked?: boolean;
}

interface Answer {
  status?: number;
  contentType?: string;
  /** the Allow header, on a 405 */
  allow?: string;
  body?: string;
  error?: string;
  ms: number;
}

/** Context a body mutation works in: raw JSON text it may splice in (deep nesting, huge numbers). */
interface Build {
  raws: string[];
  /** every valid body of every endpoint, for mixing forms */
  allBases: Json[];
}

interface Op {
  label: string;
  apply(body: Json, build: Build): Json;
}

const rawMarker = (build: Build, text: string): string => {
  build.raws.push(text);
  return `__RAW_${build.raws.length - 1}__`;
};

function serialize(body: Json, build: Build): string {
  let text = JSON.stringify(body) ?? 'null';
  build.raws.forEach((raw, i) => {
    text = text.split(`"__RAW_${i}__"`).join(raw);
  });
  return text;
}

/** Percent-encodes bytes, leaving only unreserved characters, so any string (or byte soup) fits in a path. */
function percentEncode(bytes: Buffer): string {
  let out = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9_.~-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Node refuses header values outside tab, space..~ and latin-1: keep what it would send. */
const headerSafe = (s: string) => s.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');

// ---------------------------------------------------------------------------------------------------------
// Generators

const hexChar = fc.constantFrom(...'0123456789abcdefABCDEF');
const hex = (chars: number) => fc.string({ unit: hexChar, minLength: chars, maxLength: chars });
const longHex = (bytes: number) => fc.nat().map((n) => n.toString(16).padStart(8, '0').repeat(Math.ceil(bytes / 4)).slice(0, bytes * 2));

const badHexValue: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.integer({ min: 0, max: 65 }).chain((n) => hex(2 * n + 1)).map((h) => ['odd-length', `0x${h}`] as [string, string]),
  fc.tuple(hex(39), fc.constantFrom('g', 'z', 'G', 'x', ' ', '-', 'é', '\u0000', '０', '٣')).map(([h, c]) => ['non-hex-char', `0x${h}${c}`] as [string, string]),
  hex(42).map((h) => ['21-byte-address', `0x${h}`] as [string, string]),
  hex(38).map((h) => ['19-byte-address', `0x${h}`] as [string, string]),
  hex(66).map((h) => ['33-byte-nonce', `0x${h}`] as [string, string]),
  hex(62).map((h) => ['31-byte-nonce', `0x${h}`] as [string, string]),
  hex(128).map((h) => ['64-byte-signature', `0x${h}`] as [string, string]),
  hex(132).map((h) => ['66-byte-signature', `0x${h}`] as [string, string]),
  longHex(8192).map((h) => ['8192-byte-signature', `0x${h}`] as [string, string]),
  longHex(8193).map((h) => ['8193-byte-signature', `0x${h}`] as [string, string]),
  fc.oneof(hex(40), hex(64)).map((h) => ['no-0x-prefix', h] as [string, string]),
  hex(40).map((h) => ['0X-prefix', `0X${h}`] as [string, string]),
  hex(40).map((h) => ['whitespace', ` 0x${h}\n`] as [string, string]),
  fc.constantFrom('0x', '', '0x0', 'Ox' + 'a'.repeat(40), '0x' + '0'.repeat(40), '0x' + '0'.repeat(64), '0x' + '00'.repeat(65), '0x' + 'ff'.repeat(65)).map(
    (v) => ['degenerate', v] as [string, string],
  ),
);

/** 65-byte signatures that pass the schema but are not valid ECDSA signatures under USDC's rules. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
function brokenSignatures(original: string): string[] {
  // an earlier mutation may have broken it already: start from a well-formed one then
  const signature = /^0x[0-9a-fA-F]{130}$/.test(original) ? original : `0x${'5a'.repeat(64)}1b`;
  const r = signature.slice(2, 66);
  const s = signature.slice(66, 130);
  const highS = (SECP256K1_N - BigInt(`0x${s}`)).toString(16).padStart(64, '0');
  return [
    ...['00', '01', '02', '1d', 'ff'].map((v) => `0x${r}${s}${v}`),
    `0x${'0'.repeat(64)}${s}1b`,
    `0x${r}${'0'.repeat(64)}1b`,
    `0x${'f'.repeat(64)}${s}1c`,
    `0x${r}${'f'.repeat(64)}1c`,
    `0x${r}${highS}${signature.slice(130) === '1b' ? '1c' : '1b'}`,
    `0x${SECP256K1_N.toString(16)}${s}1b`,
  ];
}

const UINT256_MAX = (1n << 256n) - 1n;
const badUintValue: fc.Arbitrary<[string, Json | { raw: string }]> = fc.oneof(
  fc.constant(['uint256-max-plus-1', (UINT256_MAX + 1n).toString()] as [string, Json]),
  fc.constant(['uint256-max', UINT256_MAX.toString()] as [string, Json]),
  fc.bigInt({ min: UINT256_MAX + 1n, max: 10n ** 120n }).map((n) => ['beyond-uint256', n.toString()] as [string, Json]),
  fc.bigInt({ min: 0n, max: 10n ** 90n }).map((n) => ['json-number', { raw: n.toString() }] as [string, { raw: string }]),
  fc.constantFrom('1e400', '-1', '-0', '1.5', '1e6', '0.000001', '123456789012345678901234567890.5', '-1e-400').map(
    (raw) => ['json-number-literal', { raw }] as [string, { raw: string }],
  ),
  fc
    .constantFrom('-1', '007', '1.5', '1e6', ' 1', '1 ', '0x10', '', '1_000', '１０', 'NaN', 'Infinity', '+1', '$0.0000001', '$1e3', '$-1', `$${'9'.repeat(80)}`, '$', '$.5', '$0.', '0'.repeat(79), '1'.repeat(79))
    .map((v) => ['malformed-uint', v] as [string, Json]),
  fc.integer().map((n) => ['number-not-string', n] as [string, Json]),
);

const unicodeValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\udfff',
    'x\ud83d',
    '\udc00\ud800',
    '\u202eevil\u202c',
    '\u200f\u0627\u0644\u0639\u0631\u0628\u064a\u0629',
    '😀'.repeat(10),
    '👩‍👩‍👧‍👦',
    '\ufeff',
    'e\u0301\u0301\u0301',
    '\uffff\ufffe',
    '\u2028\u2029',
    'Z̸̡̛a̷l̶g̵o̴',
    '0x' + '\u0430'.repeat(40), // Cyrillic a, looks like hex
    '\\u0000',
    '"\'`<script>',
  ),
);

const wrongTypeValue: fc.Arbitrary<Json> = fc.oneof(
  fc.integer(),
  fc.double().map((d) => (Number.isFinite(d) ? d : 0)),
  fc.boolean(),
  fc.constant(null),
  fc.constant([] as Json[]),
  fc.constant({} as Json),
  fc.array(fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>, { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>, { maxKeys: 3 }),
  fc.string({ maxLength: 20 }),
  fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>,
);

function nested(depth: number, shape: 'array' | 'object' | 'mixed', leaf = 'null'): string {
  if (shape === 'array') return '['.repeat(depth) + leaf + ']'.repeat(depth);
  if (shape === 'object') return '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);
  const pairs = Math.ceil(depth / 2);
  return '[{"a":'.repeat(pairs) + leaf + '}]'.repeat(pairs);
}

/** Bytes of UTF-8 a character takes. */
const utf8Bytes = (s: string) => Buffer.byteLength(s, 'utf8');

const hugeString = (bytes: number, unit: string) => unit.repeat(Math.max(1, Math.floor(bytes / utf8Bytes(unit))));

/** The mutations of a JSON body; each picks its target with a number (modulo the candidates). */
function opArbitrary(): fc.Arbitrary<Op> {
  const targets = (body: Json, filter: (value: Json, p: Path) => boolean) => pathsOf(body).filter((p) => filter(getAt(body, p), p));
  const nonRoot = (_: Json, p: Path) => p.length > 0;
  const stringLeaf = (v: Json, p: Path) => p.length > 0 && typeof v === 'string';
  const hexLeaf = (v: Json, p: Path) => stringLeaf(v, p) && /^0x/i.test(v as string);
  const uintLeaf = (v: Json, p: Path) => stringLeaf(v, p) && /^(\d+|\$.*)$/.test(v as string);
  const keyed = (body: Json) => (_: Json, p: Path) => p.length > 0 && isObject(getAt(body, p.slice(0, -1)));
  const container = (v: Json) => isObject(v);
  const at = (body: Json, n: number, filter: (value: Json, p: Path) => boolean): Path | undefined =>
    pick(targets(body, filter), n) ?? pick(targets(body, nonRoot), n);

  return fc.oneof(
    { weight: 14, arbitrary: fc.nat().map((n): Op => ({ label: 'drop-field', apply: (b) => { const p = at(b, n, keyed(b)); return p ? setAt(b, p, undefined) : b; } })) },
    {
      weight: 14,
      arbitrary: fc.tuple(fc.nat(), wrongTypeValue).map(([n, v]): Op => ({ label: 'wrong-type', apply: (b) => { const p = at(b, n, nonRoot); return p ? setAt(b, p, clone(v)) : b; } })),
    },
    {
      weight: 8,
      arbitrary: fc.tuple(fc.nat(), fc.integer({ min: 1_000, max: 70_000 }), fc.constantFrom('a', '0', 'f', 'é', '😀', '\u0000', ' ', '\\', '"', '\u202e')).map(
        ([n, bytes, unit]): Op => ({ label: 'huge-string', apply: (b) => { const p = at(b, n, stringLeaf); return p ? setAt(b, p, hugeString(bytes, unit)) : b; } }),
      ),
    },
    {
      weight: 8,
      arbitrary: fc
        .tuple(fc.nat(), fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 10, max: 5_000 }) }, { weight: 1, arbitrary: fc.integer({ min: 5_001, max: 30_000 }) }), fc.constantFrom('array', 'object', 'mixed') as fc.Arbitrary<'array' | 'object' | 'mixed'>, fc.boolean())
        .map(([n, depth, shape, atRoot]): Op => ({
          label: depth > 5_000 ? 'deep-nesting-extreme' : 'deep-nesting',
          apply: (b, build) => {
            const marker = rawMarker(build, nested(depth, shape));
            if (atRoot) return marker;
            const p = at(b, n, nonRoot);
            return p ? setAt(b, p, marker) : marker;
          },
        })),
    },
    {
      weight: 12,
      arbitrary: fc.tuple(fc.nat(), badHexValue).map(([n, [kind, v]]): Op => ({ label: `bad-hex:${kind}`, apply: (b) => { const p = at(b, n, hexLeaf); return p ? setAt(b, p, clone(v)) : b; } })),
    },
    {
      weight: 4,
      arbitrary: fc.nat().map((n): Op => ({
        label: 'bad-signature',
        apply: (b) => {
          const sigs = targets(b, (v, p) => p[p.length - 1] === 'signature' && typeof v === 'string');
          const p = pick(sigs, n);
          if (!p) {
            // no signature here (settle Form B): a signature-shaped string where something else belongs
            const other = at(b, n, nonRoot);
            return other ? setAt(b, other, `0x${'ab'.repeat(65)}`) : b;
          }
          const variants = brokenSignatures(getAt(b, p) as string);
          return setAt(b, p, variants[Math.floor(n / sigs.length) % variants.length]);
        },
      })),
    },
    {
      weight: 10,
      arbitrary: fc.tuple(fc.nat(), badUintValue).map(([n, [kind, v]]): Op => ({
        label: `bad-number:${kind}`,
        apply: (b, build) => {
          const p = at(b, n, uintLeaf);
          if (!p) return b;
          return setAt(b, p, isObject(v) && typeof v.raw === 'string' ? rawMarker(build, v.raw) : clone(v as Json));
        },
      })),
    },
    {
      weight: 10,
      arbitrary: fc.tuple(fc.nat(), unicodeValue, fc.constantFrom('replace', 'append', 'key')).map(([n, text, how]): Op => ({
        label: `unicode:${how}`,
        apply: (b) => {
          if (how === 'key') {
            const p = at(b, n, container) ?? [];
            const node = getAt(b, p);
            if (!isObject(node)) return b;
            return setAt(b, [...p, text], 'x');
          }
          const p = at(b, n, stringLeaf);
          if (!p) return b;
          return setAt(b, p, how === 'append' ? `${String(getAt(b, p))}${text}` : text);
        },
      })),
    },
    {
      weight: 6,
      arbitrary: fc
        .tuple(fc.nat(), fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '', '$ref', 'x402Version', 'payment', 'requirements')), fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>)
        .map(([n, key, v]): Op => ({
          label: 'extra-field',
          apply: (b) => {
            const p = at(b, n, container) ?? [];
            return isObject(getAt(b, p)) ? setAt(b, [...p, key], clone(v)) : b;
          },
        })),
    },
    {
      weight: 3,
      arbitrary: fc.tuple(fc.nat(), fc.boolean()).map(([n, merge]): Op => ({
        label: merge ? 'mixed-forms' : 'other-endpoint-body',
        apply: (b, build) => {
          const other = clone(build.allBases[n % build.allBases.length]);
          return merge && isObject(b) && isObject(other) ? Object.assign(b, other) : other;
        },
      })),
    },
    { weight: 4, arbitrary: (fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<Json>).map((v): Op => ({ label: 'random-json', apply: () => clone(v) })) },
  );
}

/** How the body travels: mostly as JSON, otherwise broken on the wire. */
type Transport =
  | { kind: 'json' }
  | { kind: 'chunked' }
  | { kind: 'non-json'; text: string | Uint8Array }
  | { kind: 'truncated'; at: number }
  | { kind: 'content-type'; type: string }
  | { kind: 'empty'; type: string | undefined }
  | { kind: 'charset'; charset: string }
  | { kind: 'content-encoding'; encoding: string; payload: 'garbage' | 'encoded' | 'bomb' };

const JUNK_TEXT = [
  '{',
  '}',
  '{"payment":',
  '[1,2',
  'null',
  'true',
  '"a string"',
  '123',
  'NaN',
  'undefined',
  "{'a':1}",
  '{"a":1,}',
  '{"a":1}{"b":2}',
  '\ufeff{"a":1}',
  '{"a":1} trailing',
  '/* comment */ {}',
  '{"__proto__":{"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '{"a":1e999999}',
  '{"a":-0}',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  '{"a":"\\x41"}',
  '{"a":"\u0000"}',
  '{"a":"\\uZZZZ"}',
  '{"a" "b"}',
  '{"a":01}',
  '{"transaction_hash":"0x' + '0'.repeat(64) + '","transaction_hash":1}',
  '<?xml version="1.0"?><verify/>',
  'payment=1&requirements=2',
];

const transportArbitrary: fc.Arbitrary<Transport> = fc.oneof(
  { weight: 72, arbitrary: fc.constant({ kind: 'json' } as Transport) },
  { weight: 3, arbitrary: fc.constant({ kind: 'chunked' } as Transport) },
  {
    weight: 7,
    arbitrary: fc
      .oneof(fc.constantFrom(...JUNK_TEXT), fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 200 }), fc.uint8Array({ maxLength: 300 }))
      .map((text) => ({ kind: 'non-json', text }) as Transport),
  },
  { weight: 3, arbitrary: fc.nat().map((at) => ({ kind: 'truncated', at }) as Transport) },
  {
    weight: 6,
    arbitrary: fc
      .constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', '', 'application/JSON', 'application/vnd.api+json', 'application/json;;', '*/*', 'application/json, text/plain', 'application/octet-stream', 'json')
      .map((type) => ({ kind: 'content-type', type }) as Transport),
  },
  { weight: 3, arbitrary: fc.constantFrom(undefined, 'application/json', 'text/plain').map((type) => ({ kind: 'empty', type }) as Transport) },
  { weight: 3, arbitrary: fc.constantFrom('utf-16', 'latin1', 'utf-32', 'klingon', 'UTF-8', 'ascii', '').map((charset) => ({ kind: 'charset', charset }) as Transport) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.constantFrom('gzip', 'deflate', 'br', 'x-unknown', 'gzip, gzip', 'identity', 'GZIP'), fc.constantFrom('garbage', 'encoded', 'bomb') as fc.Arbitrary<'garbage' | 'encoded' | 'bomb'>)
      .map(([encoding, payload]) => ({ kind: 'content-encoding', encoding, payload }) as Transport),
  },
);

// 16 MB of JSON that gzips to about 16 KB: the 64 KiB limit must hold for the inflated size.
let GZIP_BOMB: Buffer;

function encodeBody(json: string, t: Transport, headers: Record<string, string>): { body?: Buffer; chunked?: boolean; label: string } {
  const asJson = () => (headers['content-type'] = 'application/json');
  switch (t.kind) {
    case 'json':
      asJson();
      return { body: Buffer.from(json), label: '' };
    case 'chunked':
      asJson();
      return { body: Buffer.from(json), chunked: true, label: 'chunked' };
    case 'non-json':
      asJson();
      return { body: typeof t.text === 'string' ? Buffer.from(t.text) : Buffer.from(t.text), label: 'non-json-text' };
    case 'truncated': {
      asJson();
      const cut = json.length > 1 ? 1 + (t.at % (json.length - 1)) : 0;
      return { body: Buffer.from(json.slice(0, cut)), label: 'truncated-json' };
    }
    case 'content-type':
      if (t.type) headers['content-type'] = t.type;
      return { body: Buffer.from(json), label: `content-type:${(t.type || 'none').replace(/\+/g, ' ')}` };
    case 'empty':
      if (t.type) headers['content-type'] = t.type;
      return { body: Buffer.alloc(0), label: `empty-body:${t.type ?? 'no-type'}` };
    case 'charset':
      headers['content-type'] = `application/json; charset=${t.charset}`;
      return { body: Buffer.from(json), label: `charset:${t.charset || 'empty'}` };
    case 'content-encoding': {
      asJson();
      headers['content-encoding'] = t.encoding;
      const body =
        t.payload === 'bomb' ? GZIP_BOMB : t.payload === 'encoded' ? (t.encoding.startsWith('deflate') ? deflateSync(json) : gzipSync(json)) : Buffer.from(json.slice(0, 200));
      return { body, label: `content-encoding:${t.encoding}:${t.payload}` };
    }
  }
}

const idempotencyKey = fc.oneof(
  { weight: 12, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.uuid() },
  { weight: 2, arbitrary: fc.constantFrom('fuzz-key-1', 'fuzz-key-2', 'fuzz-key-3') },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', 'a'.repeat(256), 'has space', 'caf\u00e9', '\t', '\u00ff'.repeat(10)) },
);

const noiseHeaders: fc.Arbitrary<Record<string, string>> = fc
  .record(
    {
      'x-request-id': fc.string({ maxLength: 200 }).map(headerSafe),
      'x-api-key': fc.string({ maxLength: 80 }).map(headerSafe),
      accept: fc.constantFrom('*/*', 'text/html', 'application/xml', '', 'application/json;q=0'),
      'x-forwarded-for': fc.constantFrom('1.2.3.4', 'not-an-ip', '::1, 10.0.0.1', ''),
    },
    { requiredKeys: [] },
  )
  .map((h) => Object.fromEntries(Object.entries(h).filter(([, v]) => v !== undefined)) as Record<string, string>);

/** A case for an endpoint that takes a JSON body: one of its valid bodies, then 1–3 mutations, then a transport. */
function bodyCases(endpoint: string, method: string, urlPath: string, bases: Json[], allBases: Json[], withIdempotency: boolean): fc.Arbitrary<Case> {
  return fc
    .record({
      base: fc.nat(bases.length - 1),
      ops: fc.array(opArbitrary(), { minLength: 1, maxLength: 3 }),
      transport: transportArbitrary,
      key: withIdempotency ? idempotencyKey : fc.constant(undefined),
      noise: fc.option(noiseHeaders, { freq: 4 }),
    })
    .map(({ base, ops, transport, key, noise }) => {
      const build: Build = { raws: [], allBases };
      let body = clone(bases[base]);
      for (const op of ops) body = op.apply(body, build);
      const headers: Record<string, string> = { ...(noise ?? {}) };
      if (key !== undefined) headers['idempotency-key'] = key;
      const encoded = encodeBody(serialize(body, build), transport, headers);
      const labels = transport.kind === 'json' || transport.kind === 'chunked' || transport.kind === 'content-encoding' || transport.kind === 'charset' ? ops.map((o) => o.label) : [];
      return {
        endpoint,
        mutation: [...labels, encoded.label].filter(Boolean).join('+'),
        method,
        path: urlPath,
        headers,
        body: encoded.body,
        chunked: encoded.chunked,
      };
    });
}

/** Ids for path parameters: well-formed but unknown, real, almost real, and junk of every kind. */
function idArbitrary(prefix: string, real: string[]): fc.Arbitrary<[string, string]> {
  const realOr = real.length > 0 ? fc.constantFrom(...real) : fc.constant(`${prefix}_${'0'.repeat(32)}`);
  return fc.oneof(
    { weight: 4, arbitrary: hex(32).map((h) => ['unknown-well-formed', `${prefix}_${h.toLowerCase()}`] as [string, string]) },
    { weight: 1, arbitrary: realOr.map((id) => ['real', id] as [string, string]) },
    {
      weight: 3,
      arbitrary: fc.tuple(realOr, fc.constantFrom('upper', 'truncate', 'extend', 'other-prefix', 'no-prefix')).map(([id, how]) => {
        const v = how === 'upper' ? id.toUpperCase() : how === 'truncate' ? id.slice(0, -1) : how === 'extend' ? `${id}0` : how === 'other-prefix' ? `xyz_${id.slice(4)}` : id.slice(4);
        return [`near-miss:${how}`, percentEncode(Buffer.from(v))] as [string, string];
      }),
    },
    { weight: 3, arbitrary: fc.string({ maxLength: 100 }).filter((s) => s.length > 0).map((s) => ['random-string', percentEncode(Buffer.from(s))] as [string, string]) },
    { weight: 2, arbitrary: unicodeValue.filter((s) => s.length > 0).map((s) => ['unicode', percentEncode(Buffer.from(s, 'utf8'))] as [string, string]) },
    { weight: 2, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 40 }).map((b) => ['raw-bytes', percentEncode(Buffer.from(b))] as [string, string]) },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom('%', '%E0%A4%A', '%ZZ', '%00', '%2F', '..%2F..%2Fetc%2Fpasswd', '%C0%AF', '%FF%FE', '%ED%A0%80', `${prefix}_%00${'0'.repeat(31)}`, "'%20OR%201=1--", '%25', '%u0041')
        .map((v) => ['malformed-percent', v] as [string, string]),
    },
    { weight: 1, arbitrary: fc.integer({ min: 200, max: 4_000 }).map((n) => ['long', 'a'.repeat(n)] as [string, string]) },
  );
}

function statusCases(real: { ver: string[]; stl: string[] }): fc.Arbitrary<Case> {
  return fc
    .tuple(fc.constantFrom(['verifications', 'ver'], ['settlements', 'stl']), fc.nat(), fc.option(noiseHeaders, { freq: 3 }), fc.constantFrom('', '', '', '/', '/extra', '?x=%00'))
    .chain(([[collection, prefix], , noise, suffix]) =>
      idArbitrary(prefix, prefix === 'ver' ? real.ver : real.stl).map(([kind, id]) => ({
        endpoint: `GET /v1/${collection}/{id}`,
        mutation: `id:${kind}${suffix ? `+suffix:${suffix}` : ''}`,
        method: 'GET',
        path: `/v1/${collection}/${id}${suffix}`,
        headers: { ...(noise ?? {}) },
      })),
    );
}

function deliveryListCases(real: { ver: string[]; stl: string[] }): fc.Arbitrary<Case> {
  const keyArb = fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom('verification_id', 'settlement_id') },
    { weight: 2, arbitrary: fc.constantFrom('verification_id[]', 'verification_id[a]', 'settlement_id[0]', '__proto__', 'constructor', 'VERIFICATION_ID', '') },
    { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map((s) => percentEncode(Buffer.from(s))) },
  );
  const valueArb = fc.oneof(idArbitrary('ver', real.ver).map(([, v]) => v), idArbitrary('stl', real.stl).map(([, v]) => v), fc.constant(''), fc.constant('%00'));
  const pair = fc.tuple(keyArb, fc.option(valueArb, { freq: 8 })).map(([k, v]) => (v === null ? k : `${k}=${v}`));
  return fc.tuple(fc.array(pair, { maxLength: 4 }), fc.option(noiseHeaders, { freq: 3 })).map(([pairs, noise]) => ({
    endpoint: 'GET /v1/webhooks/deliveries',
    mutation: pairs.length === 0 ? 'no-query' : `query:${pairs.length}-params`,
    method: 'GET',
    path: `/v1/webhooks/deliveries${pairs.length > 0 ? `?${pairs.join('&')}` : ''}`,
    headers: { ...(noise ?? {}) },
  }));
}

function redeliverCases(real: string[], allBases: Json[]): fc.Arbitrary<Case> {
  return fc
    .tuple(idArbitrary('evt', real), fc.option(fc.jsonValue({ maxDepth: 3 }), { freq: 2 }), transportArbitrary, fc.option(noiseHeaders, { freq: 3 }))
    .map(([[kind, id], body, transport, noise]) => {
      const headers: Record<string, string> = { ...(noise ?? {}) };
      const encoded = body === null ? { body: undefined, label: 'no-body' } : encodeBody(serialize(body as Json, { raws: [], allBases }), transport, headers);
      return {
        endpoint: 'POST /v1/webhooks/deliveries/{id}/redeliver',
        mutation: [`id:${kind}`, encoded.label].filter(Boolean).join('+'),
        method: 'POST',
        path: `/v1/webhooks/deliveries/${id}/redeliver`,
        headers,
        body: encoded.body,
        chunked: 'chunked' in encoded ? encoded.chunked : undefined,
      };
    });
}

function queueCases(): fc.Arbitrary<Case> {
  return fc
    .tuple(fc.constantFrom('GET', 'GET', 'POST', 'PUT', 'DELETE'), fc.option(fc.string({ maxLength: 60 }), { freq: 2 }), noiseHeaders)
    .map(([method, query, headers]) => ({
      endpoint: 'GET /v1/queues',
      mutation: `method:${method}${query === null ? '' : '+query'}`,
      method,
      path: `/v1/queues${query === null ? '' : `?${percentEncode(Buffer.from(query))}`}`,
      headers,
    }));
}

/** Known paths with a method they do not serve, lookalike paths, and unknown ones. */
function wrongRouteCases(paths: Record<string, Record<string, unknown>>): fc.Arbitrary<Case> {
  const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
  const wrong = Object.entries(paths).flatMap(([p, item]) => methods.filter((m) => !(m.toLowerCase() in item)).map((m): [string, string] => [m, p]));
  const lookalikes = ['/v1/verify/', '/v1//verify', '/V1/VERIFY', '/v1/verify/extra', '/v2/verify', '/%2e%2e/v1/verify', '/v1/settle%00', '/v1/verifications', '/v1/webhooks', '/v1/webhooks/deliveries/evt_x', '/x402', '/x402/', '/admin', '/admin/queues/api/queues', '/' + 'a'.repeat(3000)];
  const served = fc.constantFrom(...wrong).map(([m, p]): [string, string, string] => ['wrong-method', m, p]);
  const unserved = fc.tuple(fc.constantFrom(...methods), fc.constantFrom(...lookalikes)).map(([m, p]): [string, string, string] => ['wrong-route', m, p]);
  return fc
    .tuple(fc.oneof(served, unserved), fc.option(fc.jsonValue({ maxDepth: 2 }), { freq: 2 }))
    .map(([[kind, method, p], body]): Case => ({
      endpoint: 'wrong method or path',
      mutation: `${kind}:${method} ${p.length > 40 ? `${p.slice(0, 20)}…` : p}`,
      method,
      path: p.replace(/\{[^}]+\}/g, 'x'),
      headers: body === null ? {} : ({ 'content-type': 'application/json' } as Record<string, string>),
      body: body === null ? undefined : Buffer.from(JSON.stringify(body)),
    }));
}

// ---------------------------------------------------------------------------------------------------------
// HTTP

function send(agent: http.Agent, base: URL, c: Case): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const done = (a: Omit<Answer, 'ms'>) => {
      if (settled) return;
      settled = true;
      resolve({ ...a, ms: performance.now() - started });
    };
    const headers: Record<string, string | number> = { ...c.headers };
    if (c.body !== undefined && !c.chunked) headers['content-length'] = c.body.length;
    let req: http.ClientRequest;
    try {
      req = http.request({ host: base.hostname, port: base.port, method: c.method, path: c.path, headers, agent, timeout: REQUEST_TIMEOUT_MS }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= 1 << 20) chunks.push(chunk);
        });
        res.on('end', () =>
          done({ status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), allow: res.headers.allow, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', (err) => done({ status: res.statusCode, error: `response: ${(err as NodeJS.ErrnoException).code ?? err.message}` }));
      });
    } catch (err) {
      done({ error: `client refused the request: ${(err as Error).message}` });
      return;
    }
    req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', (err) => done({ error: (err as NodeJS.ErrnoException).code ?? err.message }));
    if (c.body !== undefined && c.chunked) {
      const half = Math.floor(c.body.length / 2);
      req.write(c.body.subarray(0, half));
      req.end(c.body.subarray(half));
    } else {
      req.end(c.body);
    }
  });
}

/** The x402 facilitator routes answer 2xx outcomes in x402's own shape (isValid from /verify, success from /settle). */
const x402Route = (c: Case) => c.method === 'POST' && /^\/x402\/(verify|settle)$/.test(c.path.split('?')[0]);

/** The shape a refusal of a path must take, by the API the path belongs to (exact spelling: /X402/… is no x402 path). */
function shapeOf(c: Case): 'envelope' | 'x402-verify' | 'x402-settle' | 'x402-other' {
  const p = c.path.split('?')[0];
  if (p === '/x402/verify') return 'x402-verify';
  if (p === '/x402/settle') return 'x402-settle';
  return p === '/x402' || p.startsWith('/x402/') ? 'x402-other' : 'envelope';
}

/** The reason an x402-shaped refusal gives, when it has the fields of its shape. */
function x402Answer(shape: ReturnType<typeof shapeOf>, text: string | undefined): string | undefined {
  try {
    const body = JSON.parse(text ?? '');
    if (!isObject(body)) return undefined;
    const message = (field: string) => typeof body[field] === 'string' && (body[field] as string).length > 0;
    if (shape === 'x402-verify' && body.isValid === false && message('invalidReason') && message('invalidMessage')) return body.invalidReason as string;
    if (shape === 'x402-settle' && body.success === false && message('errorReason') && message('errorMessage') && typeof body.transaction === 'string') return body.errorReason as string;
    if (shape === 'x402-other' && message('errorReason') && message('errorMessage')) return body.errorReason as string;
    return undefined;
  } catch {
    return undefined;
  }
}

function isEnvelope(text: string | undefined): { ok: boolean; code?: string } {
  try {
    const body = JSON.parse(text ?? '');
    const ok =
      isObject(body) &&
      Object.keys(body).length === 1 &&
      isObject(body.error) &&
      typeof body.error.code === 'string' &&
      body.error.code.length > 0 &&
      typeof body.error.message === 'string' &&
      Object.keys(body.error).every((k) => ['code', 'message', 'details'].includes(k)) &&
      (body.error.details === undefined || isObject(body.error.details));
    return { ok, code: ok ? (body.error as { code: string }).code : undefined };
  } catch {
    return { ok: false };
  }
}

const bump = (m: Map<string, number>, k: string, by = 1) => m.set(k, (m.get(k) ?? 0) + by);
const table = (m: Map<string, number>) =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');
const mib = (kib: number) => Math.round((kib / 1024) * 10) / 10;

function preview(c: Case): string {
  const body = c.body === undefined ? '(no body)' : c.body.length > 300 ? `${JSON.stringify(c.body.subarray(0, 300).toString('utf8'))}… (${c.body.length} bytes)` : JSON.stringify(c.body.toString('utf8'));
  const headers = Object.entries(c.headers)
    .filter(([k]) => ['content-type', 'content-encoding', 'idempotency-key'].includes(k))
    .map(([k, v]) => `${k}: ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`)
    .join('; ');
  const p = c.path.length > 200 ? `${c.path.slice(0, 200)}… (${c.path.length} chars)` : c.path;
  return `${c.method} ${p}${headers ? ` [${headers}]` : ''}${c.chunked ? ' [chunked]' : ''} body ${body}`;
}

// ---------------------------------------------------------------------------------------------------------
// The scenario

/** Paths of the OpenAPI document that are pages for people, with the content type of their 2xx. */
const PAGES = new Map([
  // the index of what is served: a small page for a browser, JSON for everyone else (its Accept decides)
  ['/', /^(text\/html|application\/json)/],
  ['/status', /^text\/html/],
  ['/merchant', /^text\/html/],
  ['/merchant/page.js', /^(text|application)\/javascript/],
  ['/merchant/page.css', /^text\/css/],
]);

let devnet: Devnet | undefined;
let db: TestDatabase | undefined;
let api: ApiProcess | undefined;
let stackEnvironment: Record<string, string> | undefined;

beforeAll(async () => {
  [devnet, db] = await Promise.all([startDevnet(), createTestDatabase()]);
  // no worker runs: an x402 settle of a valid payment is held SETTLE_MAX_HOLD_MS for its transaction, then stopped
  const env = stackEnv(devnet, db.url, { API_PROCESSES: '1', LOG_LEVEL: 'warn', SETTLE_WAIT_TIMEOUT_MS: '1000', SETTLE_MAX_HOLD_MS: '2000' });
  stackEnvironment = env;
  // the inspector lets the test force a full GC in the API process before reading its heap (nothing else changes)
  api = await startApiProcess(env, { inspect: true });
  GZIP_BOMB = gzipSync(`{"a":"${'0'.repeat(16 * 2 ** 20)}"}`);
}, 60_000);

afterAll(async () => {
  await api?.stop();
  await Promise.all([devnet?.stop(), db?.drop(), stackEnvironment ? deleteStackQueues(stackEnvironment) : undefined]);
  // last: it throws when a check failed, after the clean-up
  report.save();
});

it(`${TOTAL} malformed requests: all 4xx in the envelope, the API process stays up and its memory flat`, async () => {
  const started = Date.now();
  const d = devnet!;
  const proc = api!;
  const base = new URL(proc.url);
  const { merchant } = d.accounts;
  const post = async (p: string, body: unknown) => {
    const res = await fetch(`${proc.url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  // Valid bodies of every endpoint, from payments signed under the devnet token's real domain.
  const sign = async () => {
    const s = await d.signTransferAuthorization(d.accounts.payer.privateKey, { to: merchant.address, value: PRICE_UNITS });
    const a = s.authorization;
    const authorization = { from: a.from, to: a.to, value: a.value.toString(), validAfter: a.validAfter.toString(), validBefore: a.validBefore.toString(), nonce: a.nonce };
    return { authorization, signature: s.signature };
  };
  type Signed = Awaited<ReturnType<typeof sign>>;
  const formA = (p: Signed, variant = 0): Json => ({
    payment: { x402Version: 2, ...(variant === 1 ? { scheme: 'exact', network: 'eip155:84532' } : {}), payload: { authorization: { ...p.authorization }, signature: p.signature } },
    requirements: {
      scheme: 'exact',
      ...(variant === 1 ? { amount: PRICE_UNITS.toString(), asset: d.token } : { price: '$0.01', token: d.token }),
      network: 'eip155:84532',
      payTo: merchant.address,
      ...(variant === 2 ? { maxAmountRequired: PRICE_UNITS.toString(), extra: { name: 'USDC', version: '2' }, maxTimeoutSeconds: 60 } : {}),
    },
  });
  const formB = (p: Signed, variant = 0, webhookUrl?: string): Json => ({
    transaction_hash: p.authorization.nonce,
    chain: variant === 1 ? 'base-sepolia' : 'layer2-sepolia',
    seller_address: merchant.address,
    expected_amount: PRICE_UNITS.toString(),
    expected_token: d.token,
    metadata: { source: 'malformed-requests', paymentPayload: { x402Version: 1, scheme: 'exact', network: variant === 1 ? 'base-sepolia' : 'layer2-sepolia', payload: { authorization: { ...p.authorization }, signature: p.signature } } },
    ...(webhookUrl ? { webhook_url: webhookUrl } : {}),
  });
  const x402Requirements = () => ({ scheme: 'exact', network: 'eip155:84532', asset: d.token, amount: PRICE_UNITS.toString(), payTo: merchant.address, maxTimeoutSeconds: 60, extra: { name: 'USDC', version: '2' } });
  const x402V2 = (p: Signed): Json => ({
    x402Version: 2,
    paymentPayload: { x402Version: 2, accepted: x402Requirements(), payload: { authorization: { ...p.authorization }, signature: p.signature } },
    paymentRequirements: x402Requirements(),
  });
  const x402V1 = (p: Signed): Json => {
    const requirements = { scheme: 'exact', network: 'base-sepolia', maxAmountRequired: PRICE_UNITS.toString(), resource: 'https://example.com/r', description: 'r', mimeType: 'application/json', payTo: merchant.address, maxTimeoutSeconds: 60, asset: d.token, extra: { name: 'USDC', version: '2' } };
    return { x402Version: 1, paymentPayload: { x402Version: 1, scheme: 'exact', network: 'base-sepolia', payload: { authorization: { ...p.authorization }, signature: p.signature } }, paymentRequirements: requirements };
  };

  const fresh = await Promise.all(Array.from({ length: 6 }, sign));
  const verified = await Promise.all(Array.from({ length: 6 }, sign));
  const real = { ver: [] as string[], stl: [] as string[], evt: [] as string[] };
  // Verified payments, so settle bodies start out valid (and the status routes have real ids).
  for (const [i, p] of verified.entries()) {
    const res = await post('/v1/verify', i % 2 === 0 ? formA(p, i % 3) : formB(p, i % 3 === 1 ? 1 : 0, i === 1 ? 'http://127.0.0.1:9/hook' : undefined));
    if (res.status !== 200) throw new Error(`setup verify answered ${res.status} ${JSON.stringify(res.body)}\n${proc.lines.slice(-5).join('\n')}`);
    const id = (res.body.verification_id ?? (res.body.details as { verification_id?: string } | undefined)?.verification_id) as string;
    expect(typeof id).toBe('string');
    real.ver.push(id);
  }
  const formBVerified = verified.filter((_, i) => i % 2 === 1);
  const settledB = await post('/v1/settle', { verification_id: real.ver[1], destination_address: merchant.address });
  expect(settledB.status).toBe(200);
  real.stl.push(settledB.body.settlement_id as string);
  // the deliveries listing is never open without a key (issue 13), so the real event ids come from the database
  real.evt.push(...(await db!.prisma.webhookEvent.findMany({ where: { verificationId: real.ver[1] }, select: { id: true } })).map((e) => e.id));

  const verifyA = fresh.map((p, i) => formA(p, i % 3));
  const verifyB = fresh.map((p, i) => formB(p, i % 2));
  const settleA = verified.flatMap((p, i) => (i % 2 === 0 ? [formA(p, i % 3)] : []));
  const settleB: Json[] = real.ver.filter((_, i) => i % 2 === 1).map((id) => ({ verification_id: id, destination_address: merchant.address }));
  expect(settleB.length).toBe(formBVerified.length);

  // The routes this build serves, from its own OpenAPI document: the x402 routes are covered when present.
  const openapi = (await (await fetch(`${proc.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  const served = Object.keys(openapi.paths);
  const x402Bases = [...fresh.slice(0, 3).map(x402V2), ...fresh.slice(3).map(x402V1)];
  const allBases = [...verifyA, ...verifyB, ...settleB, ...x402Bases];

  const endpoints: Array<{ weight: number; arbitrary: fc.Arbitrary<Case> }> = [
    { weight: 20, arbitrary: bodyCases('POST /v1/verify (Form A)', 'POST', '/v1/verify', verifyA, allBases, true) },
    { weight: 18, arbitrary: bodyCases('POST /v1/verify (Form B)', 'POST', '/v1/verify', verifyB, allBases, true) },
    { weight: 11, arbitrary: bodyCases('POST /v1/settle (Form A)', 'POST', '/v1/settle', settleA, allBases, false) },
    { weight: 11, arbitrary: bodyCases('POST /v1/settle (Form B)', 'POST', '/v1/settle', settleB, allBases, false) },
    { weight: 12, arbitrary: statusCases(real) },
    { weight: 7, arbitrary: deliveryListCases(real) },
    { weight: 6, arbitrary: redeliverCases(real.evt, allBases) },
    { weight: 3, arbitrary: queueCases() },
    { weight: 3, arbitrary: wrongRouteCases(openapi.paths) },
  ];
  const known = new Set(['/v1/verify', '/v1/settle', '/v1/verifications/{verification_id}', '/v1/settlements/{settlement_id}', '/v1/webhooks/deliveries', '/v1/webhooks/deliveries/{delivery_id}/redeliver', '/v1/queues', '/healthz', '/readyz', '/metrics', '/openapi.json', '/docs', '/admin/queues']);
  const extra = served.filter((p) => !known.has(p));
  for (const p of extra) {
    for (const method of Object.keys(openapi.paths[p]).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))) {
      const isX402Body = /^\/x402\/(verify|settle)$/.test(p);
      const urlPath = p.replace(/\{[^}]+\}/g, () => `id_${Math.random().toString(16).slice(2)}`);
      const name = `${method.toUpperCase()} ${p}`;
      endpoints.push({
        weight: isX402Body ? 8 : 2,
        arbitrary: method === 'get' ? statusLike(name, urlPath) : bodyCases(name, method.toUpperCase(), urlPath, isX402Body ? x402Bases : allBases, allBases, false),
      });
    }
  }
  function statusLike(name: string, urlPath: string): fc.Arbitrary<Case> {
    return fc.tuple(fc.option(fc.string({ maxLength: 60 }), { freq: 2 }), noiseHeaders).map(([q, headers]) => ({
      endpoint: name,
      mutation: q === null ? 'plain' : 'query',
      method: 'GET',
      path: `${urlPath}${q === null ? '' : `?${percentEncode(Buffer.from(q))}`}`,
      headers,
    }));
  }
  report.note(`seed ${SEED} (reproduce with MALFORMED_SEED=${SEED}); routes in /openapi.json beyond the /v1 ones: ${extra.length > 0 ? extra.join(', ') : 'none (no /x402 routes in this build)'}`);

  const caseArbitrary = fc.oneof(...endpoints);
  function* cases(): Generator<Case> {
    for (let batch = 0, made = 0; made < TOTAL; batch++) {
      const n = Math.min(BATCH, TOTAL - made);
      // each batch has its own seed, derived so that runs with nearby seeds share no batch
      const seed = createHash('sha256').update(`${SEED}:${batch}`).digest().readInt32LE(0);
      for (const c of fc.sample(caseArbitrary, { numRuns: n, seed })) yield c;
      made += n;
    }
  }

  // Send them, 16 at a time on keep-alive connections; read RSS every 500 answers.
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const statuses = new Map<string, number>();
  const codes = new Map<string, number>();
  const perEndpoint = new Map<string, Map<string, number>>();
  const mutations = new Map<string, number>();
  const failures = new Map<string, Array<{ c: Case; a: Answer }>>();
  const failureLog: string[] = [];
  const rss: Array<[number, number]> = [[0, proc.rssKiB()]];
  /** [answers, heapUsed after a full GC (KiB), external + arrayBuffers (KiB), RSS after that GC (KiB)] */
  const afterGc: Array<[number, number, number, number]> = [];
  const sampleAfterGc = async (n: number) => {
    try {
      const m = await proc.collectGarbage();
      afterGc.push([n, m.heapUsed / 1024, m.external / 1024, proc.rssKiB()]);
    } catch (err) {
      report.note(`memory sample at ${n} answers failed: ${(err as Error).message}`);
    }
  };
  await sampleAfterGc(0);
  let done = 0;
  let accepted = 0;
  let acceptedBodies = 0;
  let bodyCasesSent = 0;
  let oversize = 0;
  let x402Shaped = 0;
  let wrongMethods = 0;
  const acceptedMutations = new Map<string, number>();
  let oversizeNot413 = 0;
  let slowest = 0;
  const iterator = cases();

  const fail = (kind: string, c: Case, a: Answer) => {
    const key = `${kind} | ${c.endpoint} | ${a.status ?? a.error}`;
    const list = failures.get(key) ?? [];
    if (list.length < 3) list.push({ c, a });
    failures.set(key, list);
    failureLog.push(JSON.stringify({ kind, endpoint: c.endpoint, mutation: c.mutation, method: c.method, path: c.path, headers: c.headers, chunked: c.chunked, body: c.body?.toString('base64'), answer: a }));
  };

  async function lane() {
    for (let next = iterator.next(); !next.done; next = iterator.next()) {
      const c = next.value;
      const a = await send(agent, base, c);
      done++;
      slowest = Math.max(slowest, a.ms);
      if (done % 500 === 0 && proc.alive()) rss.push([done, proc.rssKiB()]);
      if ((done % 1000 === 0 || done === TOTAL) && proc.alive()) await sampleAfterGc(done);
      for (const m of c.mutation.split('+')) bump(mutations, m.split(':')[0] || 'none');
      const ep = perEndpoint.get(c.endpoint) ?? new Map<string, number>();
      perEndpoint.set(c.endpoint, ep);
      const isBody = /^POST \/(v1|x402)\/(verify|settle)/.test(c.endpoint);
      if (isBody) bodyCasesSent++;
      const jsonType = c.headers['content-type'] === 'application/json' && !c.headers['content-encoding'];
      if (c.body && c.body.length > MAX_BODY_BYTES && jsonType && c.method === 'POST') {
        oversize++;
        if (a.status !== 413) {
          oversizeNot413++;
          fail('over 64 KiB but not 413', c, a);
        }
      }
      if (a.status === undefined) {
        bump(statuses, 'no answer');
        bump(ep, 'no answer');
        fail('no answer', c, a);
        continue;
      }
      bump(statuses, String(a.status));
      bump(ep, String(a.status));
      if (a.status >= 500) {
        const env = isEnvelope(a.body);
        if (env.code) bump(codes, env.code);
        fail('5xx', c, a);
      } else if (a.status >= 400) {
        const shape = shapeOf(c);
        if (shape === 'envelope') {
          const env = isEnvelope(a.body);
          if (env.ok) {
            bump(codes, env.code!);
            if (!KNOWN_CODES.has(env.code!)) fail('unknown error code', c, a);
          } else {
            fail('4xx not in its API\'s shape', c, a);
          }
        } else {
          const x402 = x402Answer(shape, a.body);
          if (x402) {
            bump(codes, `x402:${x402}`);
            x402Shaped++;
          } else {
            fail('4xx not in its API\'s shape', c, a);
          }
        }
        if (!ALLOWED_4XX.includes(a.status)) fail('unexpected 4xx status', c, a);
        if (a.status === 405 && !a.allow) fail('405 without Allow', c, a);
        // a path we serve, asked with a method it does not answer: 405 (or a refusal made before routing: the
        // body, a limiter; or the route's own 404, like the queue dashboard's when it is off), never "no route"
        if (c.mutation.startsWith('wrong-method:')) {
          wrongMethods++;
          if (a.status === 404 && (a.body ?? '').includes('no route for')) fail('served path with a wrong method answered 404', c, a);
        }
      } else if (a.status === 200 || a.status === 202) {
        accepted++;
        if (isBody) {
          acceptedBodies++;
          bump(acceptedMutations, c.mutation.split('+').map((m) => m.split(':')[0]).join('+'));
        }
        // the pages in the OpenAPI document (the status page, the merchant page) answer HTML, never JSON, and their assets script or style
        const page = PAGES.get(c.path.split('?')[0]);
        if (page) {
          if (!page.test(a.contentType ?? '')) fail('page 2xx that is not HTML', c, a);
          continue;
        }
        try {
          const body = JSON.parse(a.body ?? '');
          // an x402 outcome: { isValid } from /verify, { success } from /settle
          if (x402Route(c) && !(isObject(body) && typeof (/verify/i.test(c.path) ? body.isValid : body.success) === 'boolean')) fail('x402 2xx without its outcome field', c, a);
        } catch {
          fail('non-JSON 2xx', c, a);
        }
      } else {
        fail('unexpected status', c, a);
      }
    }
  }

  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  agent.destroy();
  const sendSeconds = (Date.now() - started) / 1000;

  // The process after the storm: alive, answering, and still doing real work.
  const alive = proc.alive();
  const health = alive ? await fetch(`${proc.url}/healthz`).then((r) => r.status, () => 0) : 0;
  const after = await sign();
  const stillWorks = alive ? await post('/v1/verify', formA(after)).then((r) => r.status, () => 0) : 0;
  const rssEnd = alive ? proc.rssKiB() : 0;
  await sleep(2_000);
  const rssIdle = proc.alive() ? proc.rssKiB() : 0;
  const unhandled = proc.lines.filter((l) => /unhandled error|error after response started|x402 request failed|uncaught/i.test(l));
  const errorKinds = new Map<string, number>();
  for (const line of unhandled) {
    try {
      interface LoggedError { name?: string; code?: string; status?: number; meta?: { driverAdapterError?: { cause?: { originalCode?: string; code?: string; originalMessage?: string; message?: string } } } }
      const { message, err } = JSON.parse(line) as { message: string; err?: LoggedError };
      const cause = err?.meta?.driverAdapterError?.cause;
      const what = err?.code ? `${err.name ?? ''} ${err.code}${cause ? ` (postgres ${cause.originalCode ?? cause.code}: ${cause.originalMessage ?? cause.message})` : ''}` : err?.status ? `error with status ${err.status}` : JSON.stringify(err ?? {});
      bump(errorKinds, `${message}: ${what.trim()}`);
    } catch {
      bump(errorKinds, line.slice(0, 120));
    }
  }

  const at = (n: number) => afterGc.find(([k]) => k >= n) ?? afterGc[afterGc.length - 1];
  const [, heapWarm, , rssWarm] = at(WARM_UP);
  const [, heapBase, , rssBase] = at(BASELINE);
  const [, heapMid, , rssMid] = at(MIDDLE);
  const [lastN, heapLast, , rssLast] = afterGc[afterGc.length - 1];
  const heapGrowth = mib(heapLast - heapBase);
  const rssGrowth = mib(rssLast - rssBase);
  const firstHalf = mib(rssMid - rssBase);
  const secondHalf = mib(rssLast - rssMid);

  // The refusals a newcomer met with the wrong words or shape (issue 44), each with its exact answer: the fuzzer
  // holds every answer to its shape, these hold the words too.
  const ask = async (method: string, p: string, text?: string) => {
    const res = await fetch(`${proc.url}${p}`, { method, headers: text === undefined ? {} : { 'content-type': 'application/json' }, body: text });
    return { status: res.status, allow: res.headers.get('allow'), body: (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined };
  };
  const neither = expect.stringContaining('the body fits neither form: Form A sends `payment`, `requirements`; Form B sends');
  const named: Array<[string, () => Promise<unknown>, unknown]> = [
    ['null on /v1/verify', () => ask('POST', '/v1/verify', 'null'), { status: 400, allow: null, body: { error: { code: 'invalid_request', message: 'request body must be a JSON object, not null' } } }],
    ['"hello" on /x402/settle', () => ask('POST', '/x402/settle', '"hello"'), { status: 400, allow: null, body: { success: false, errorReason: 'invalid_payload', errorMessage: 'request body must be a JSON object, not a string', transaction: '', network: '' } }],
    ['42 on /x402/verify', () => ask('POST', '/x402/verify', '42'), { status: 400, allow: null, body: { isValid: false, invalidReason: 'invalid_payload', invalidMessage: 'request body must be a JSON object, not a number' } }],
    ['no x402Version on /x402/verify', () => ask('POST', '/x402/verify', '{"paymentPayload":{},"paymentRequirements":{}}'), { status: 400, allow: null, body: { isValid: false, invalidReason: 'invalid_x402_version', invalidMessage: 'x402Version is missing; send 1 or 2 (at the top of the body or in paymentPayload)' } }],
    ['{} on /v1/verify', () => ask('POST', '/v1/verify', '{}'), { status: 400, allow: null, body: { error: { code: 'invalid_request', message: neither, details: expect.any(Object) } } }],
    ['{} on /v1/settle', () => ask('POST', '/v1/settle', '{}'), { status: 400, allow: null, body: { error: { code: 'invalid_request', message: neither, details: expect.any(Object) } } }],
    ['GET /x402/settle', () => ask('GET', '/x402/settle'), { status: 405, allow: 'POST', body: { success: false, errorReason: 'method_not_allowed', errorMessage: '/x402/settle does not answer GET; it answers POST', transaction: '', network: '' } }],
    ['PUT /v1/verify', () => ask('PUT', '/v1/verify'), { status: 405, allow: 'POST', body: { error: { code: 'method_not_allowed', message: '/v1/verify does not answer PUT; it answers POST', details: { allowed_methods: ['POST'] } } } }],
    ['malformed JSON on /x402/verify', () => ask('POST', '/x402/verify', '{"x402Version": '), { status: 400, allow: null, body: { isValid: false, invalidReason: 'invalid_payload', invalidMessage: 'request body is not valid JSON' } }],
    ['a body over the limit on /x402/settle', () => ask('POST', '/x402/settle', JSON.stringify({ pad: 'x'.repeat(MAX_BODY_BYTES) })), { status: 413, allow: null, body: { success: false, errorReason: 'payload_too_large', errorMessage: `request body is larger than ${MAX_BODY_BYTES} bytes`, transaction: '', network: '' } }],
  ];
  const wrongWords: string[] = [];
  for (const [what, run, expected] of named) {
    const got = await run();
    if (!equals(got, expected)) wrongWords.push(`${what}: ${JSON.stringify(got).slice(0, 300)}`);
  }
  for (const w of wrongWords) report.note(`FAILED named refusal ${w}`);

  const failureCount = failureLog.length;
  const count = (kind: string) => failureLog.filter((l) => JSON.parse(l).kind === kind).length;
  if (failureLog.length > 0) {
    const file = path.join(os.tmpdir(), `malformed-requests-failures-${SEED}.jsonl`);
    writeFileSync(file, failureLog.join('\n') + '\n');
    report.note(`${failureCount} failing inputs written to ${file} (one JSON per line, body base64)`);
    for (const [key, list] of failures) {
      for (const { c, a } of list.slice(0, 2)) {
        report.note(`FAILED ${key}: ${preview(c)} → ${a.status ?? a.error} ${(a.body ?? '').slice(0, 200)}`);
      }
    }
  }
  report.note(`status histogram: ${table(statuses)}`);
  report.note(`error codes: ${table(codes)}`);
  for (const [ep, m] of [...perEndpoint.entries()].sort()) report.note(`${ep}: ${[...m.values()].reduce((a, b) => a + b, 0)} requests (${table(m)})`);
  report.note(`mutation kinds applied (a request may carry up to 3): ${table(mutations)}`);
  report.note(`/x402 4xx answers in the x402 shape (isValid/invalidReason, success/errorReason, errorReason): ${x402Shaped}; wrong methods on served paths: ${wrongMethods}`);
  if (acceptedMutations.size > 0) report.note(`verify/settle bodies answered 2xx, by mutation: ${table(acceptedMutations)}`);
  if (errorKinds.size > 0) report.note(`API error log: ${table(errorKinds)}`);
  report.note(`answered 200/202 (the input happened to stay valid, or the route has nothing to reject): ${accepted}, of which verify/settle bodies: ${acceptedBodies} of ${bodyCasesSent}`);
  report.note(`after a forced full GC, every 1,000 answers (answers: heap used / external / RSS, MiB): ${afterGc.map(([n, h, e, r]) => `${n}: ${mib(h)} / ${mib(e)} / ${mib(r)}`).join(', ')}`);
  report.note(`RSS (MiB) every 500 answers, as read (GC forced every 1,000): ${rss.map(([n, k]) => `${n}: ${mib(k)}`).join(', ')}; right after: ${mib(rssEnd)}; 2 s later: ${mib(rssIdle)}`);
  report.note(`sent in ${sendSeconds.toFixed(1)} s (${Math.round(TOTAL / sendSeconds)} requests/s with setup); slowest answer ${Math.round(slowest)} ms`);

  const checks = [
    report.check('requests sent', TOTAL, done),
    report.check('requests left without an answer (reset, timeout)', 0, count('no answer')),
    report.check('5xx answers', 0, count('5xx')),
    report.check('4xx answers not in the shape of their API (the envelope; on /x402, the x402 shape)', 0, count('4xx not in its API\'s shape')),
    report.check(`named refusals with their exact words and shape (${named.map(([w]) => w).join('; ')})`, named.length, named.length - wrongWords.length),
    report.check('wrong methods on served paths answered 404, or 405 without Allow', 0, count('served path with a wrong method answered 404') + count('405 without Allow')),
    report.check('4xx answers with a code the API does not define', 0, count('unknown error code')),
    report.check('answers outside 4xx (400/401/404/405/409/413/415/422/429) and 200/202', 0, count('unexpected 4xx status') + count('unexpected status')),
    report.check('2xx answers that are not JSON (or, on /x402, lack isValid/success; or, on a page, not its HTML, script or style)', 0, count('non-JSON 2xx') + count('x402 2xx without its outcome field') + count('page 2xx that is not HTML')),
    report.assert('JSON bodies over 64 KiB answered 413', `all of them`, `${oversize - oversizeNot413} of ${oversize}`, oversizeNot413 === 0),
    report.assert('verify/settle bodies that stayed valid (generators really break them)', 'under 10%', `${((100 * acceptedBodies) / Math.max(1, bodyCasesSent)).toFixed(1)}%`, acceptedBodies < bodyCasesSent * 0.1),
    report.check('API process alive after the run', true, alive),
    report.check('GET /healthz after the run', 200, health),
    report.check('a valid verify after the run', 200, stillWorks),
    report.check('unhandled errors in the API log', 0, unhandled.length),
    report.assert(
      `heap used after a full GC, growth from answer ${BASELINE} to the last`,
      `under ${MAX_HEAP_GROWTH_MIB} MiB`,
      `${heapGrowth} MiB (${mib(heapWarm)} at ${WARM_UP}, ${mib(heapBase)} at ${BASELINE}, ${mib(heapMid)} at ${MIDDLE}, ${mib(heapLast)} at ${lastN})`,
      heapGrowth < MAX_HEAP_GROWTH_MIB,
    ),
    report.assert(
      `RSS after a full GC, growth from answer ${BASELINE} to the last`,
      `under ${MAX_RSS_GROWTH_MIB} MiB`,
      `${rssGrowth} MiB (${mib(rssWarm)} at ${WARM_UP}, ${mib(rssBase)} at ${BASELINE}, ${mib(rssMid)} at ${MIDDLE}, ${mib(rssLast)} at ${lastN})`,
      rssGrowth < MAX_RSS_GROWTH_MIB,
    ),
    report.assert('RSS after a full GC, second half vs first half', `second half under ${MAX_SECOND_HALF_RSS_GROWTH_MIB} MiB`, `first half ${firstHalf} MiB, second half ${secondHalf} MiB`, secondHalf < MAX_SECOND_HALF_RSS_GROWTH_MIB),
    report.check('answers at which memory was sampled after a GC', TOTAL, lastN),
  ];
  process.stdout.write(`malformed-requests: ${JSON.stringify({ seed: SEED, statuses: Object.fromEntries(statuses), failures: [...failures.keys()], rss: rss.map(([n, k]) => [n, mib(k)]), afterGc: afterGc.map(([n, h, e, r]) => [n, mib(h), mib(e), mib(r)]), seconds: sendSeconds })}\n`);
  expect(checks.every(Boolean)).toBe(true);
}, 240_000);
