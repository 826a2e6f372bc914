import { isValidRouteTemplate, sanitizeResourceServiceMetadata } from '@x402/extensions/bazaar';
import { checkResourceUrl } from './resource-url';
import { validateInfo } from './schema-check';

/** x402's discovery extension key (`@x402/extensions`' `BAZAAR.key`). */
export const BAZAAR = 'bazaar';

export interface DeclarationLimits {
  /** the largest declaration read, in bytes of its JSON (DISCOVERY_MAX_DECLARATION_BYTES) */
  maxBytes: number;
  /** development and tests: resource URLs on private or local hosts are accepted */
  allowPrivateUrls: boolean;
}

/** The deepest a declaration nests: real ones nest a handful of levels (info.input.body.properties …). */
export const MAX_DECLARATION_DEPTH = 24;
const MAX_TEXT = { description: 2048, mimeType: 128, toolName: 128 } as const;

/** What identifies a resource in the catalog: HTTP by (method, URL), MCP tools by (URL, tool name). */
export interface ResourceIdentity {
  key: string;
  /** origin + route template (or path): the query string is not part of a resource */
  url: string;
  type: 'http' | 'mcp';
}

/** The catalog entry a declaration asks for, listed once a payment to it settles (DiscoveryResource's fields). */
export interface Listing {
  resource: string;
  type: 'http' | 'mcp';
  x402Version: 2;
  /** the requirements of the payment that was made (its payTo is the settlement's, never the declaration's) */
  accepts: Array<Record<string, unknown>>;
  description?: string;
  mimeType?: string;
  serviceName?: string;
  tags?: string[];
  iconUrl?: string;
  method?: string;
  toolName?: string;
  routeTemplate?: string;
  extensions: { bazaar: { info: unknown; schema: unknown; routeTemplate?: string } };
}

export type DeclarationIntake =
  | { kind: 'none' }
  | { kind: 'rejected'; reason: string; field: string; resource: ResourceIdentity }
  | { kind: 'accepted'; resource: ResourceIdentity; listing: Listing };

export interface DeclaredPayment {
  /** `paymentPayload.extensions.bazaar`, as it came */
  declaration: unknown;
  /** `paymentPayload.resource` (x402 v2's resource block: url, description, mimeType …), untrusted */
  resource: unknown;
  /** `paymentRequirements`: what the payment pays */
  requirements: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Takes the bazaar declaration out of an x402 request body (`paymentPayload.extensions.bazaar`), so that
 * nothing about it (its size, its depth, text Postgres cannot store) can make the payment's own checks fail:
 * a bad declaration is reported, never a reason to refuse a payment. The resource block is read, not removed.
 */
export function takeDeclaration(body: unknown): DeclaredPayment | undefined {
  if (!isObject(body) || !isObject(body.paymentPayload)) return undefined;
  const payload = body.paymentPayload;
  if (!isObject(payload.extensions) || !Object.hasOwn(payload.extensions, BAZAAR)) return undefined;
  const declaration = payload.extensions[BAZAAR];
  const { [BAZAAR]: _taken, ...rest } = payload.extensions;
  payload.extensions = rest;
  return { declaration, resource: payload.resource, requirements: isObject(body.paymentRequirements) ? body.paymentRequirements : {} };
}

interface Shape {
  bytes: number;
  depth: number;
  problem?: { path: string; reason: string };
}

/** Size, depth and storability of a JSON value, walked without recursion (a hostile value cannot overflow the stack). */
function shapeOf(value: unknown, maxBytes: number): Shape {
  const stack: Array<[unknown, number, string]> = [[value, 1, 'extensions.bazaar']];
  let bytes = 0;
  let depth = 0;
  while (stack.length > 0) {
    const [node, level, path] = stack.pop()!;
    depth = Math.max(depth, level);
    if (level > MAX_DECLARATION_DEPTH) return { bytes, depth, problem: { path, reason: `the declaration nests more than ${MAX_DECLARATION_DEPTH} levels deep` } };
    if (typeof node === 'string') {
      if (node.includes('\u0000') || !node.isWellFormed()) return { bytes, depth, problem: { path, reason: 'the text contains a NUL character or an unpaired UTF-16 surrogate' } };
      bytes += Buffer.byteLength(node) + 2;
    } else if (node === null || typeof node !== 'object') {
      bytes += String(node).length;
    } else {
      const entries = Array.isArray(node) ? node.map((v, i) => [String(i), v] as const) : Object.entries(node);
      bytes += 2;
      for (const [key, child] of entries) {
        if (key.includes('\u0000') || !key.isWellFormed()) return { bytes, depth, problem: { path, reason: 'a key contains a NUL character or an unpaired UTF-16 surrogate' } };
        bytes += Buffer.byteLength(key) + 4;
        stack.push([child, level + 1, Array.isArray(node) ? `${path}[${key}]` : `${path}.${key}`]);
      }
    }
    if (bytes > maxBytes) return { bytes, depth, problem: { path: 'extensions.bazaar', reason: `the declaration is larger than ${maxBytes} bytes, the most this facilitator reads` } };
  }
  return { bytes, depth };
}

/** The identity a rejection is filed under when the declaration is too broken to name its resource. */
function fallbackIdentity(resource: unknown): ResourceIdentity {
  const raw = isObject(resource) && typeof resource.url === 'string' ? resource.url.slice(0, 512) : '';
  let url = raw;
  try {
    const parsed = new URL(raw);
    url = `${parsed.origin}${parsed.pathname}`;
  } catch {
    // kept as given (truncated): the merchant page shows it with its reason
  }
  return { key: `unreadable ${url}`, url, type: 'http' };
}

const text = (v: unknown, max: number): string | undefined => (typeof v === 'string' && v.length > 0 ? v.slice(0, max) : undefined);

/** Only the requirement fields a buyer needs, bounded: nothing else of the request reaches the catalog. */
function acceptOf(requirements: Record<string, unknown>): Record<string, unknown> {
  const keep = ['scheme', 'network', 'amount', 'asset', 'payTo', 'maxTimeoutSeconds', 'extra'];
  const out: Record<string, unknown> = {};
  for (const k of keep) if (requirements[k] !== undefined) out[k] = requirements[k];
  if (isObject(out.extra) && JSON.stringify(out.extra).length > 1024) delete out.extra;
  return out;
}

/**
 * Reads a payment's bazaar declaration as `@x402/extensions` 2.27 defines it, cheaply and without storing
 * anything: its size, depth and text; the spec's shape (info.input.type http or mcp, method, bodyType, MCP's
 * toolName and inputSchema); `info` against its own `schema` (JSON Schema 2020-12, no external references);
 * the resource URL (x402 v2's `paymentPayload.resource.url`: http(s), no credentials, not a private host);
 * the route template. Every rejection names its reason and the field at fault.
 */
export function readDeclaration(payment: DeclaredPayment | undefined, limits: DeclarationLimits): DeclarationIntake {
  if (payment === undefined) return { kind: 'none' };
  const { declaration, resource } = payment;
  const reject = (field: string, reason: string, identity?: ResourceIdentity): DeclarationIntake => ({
    kind: 'rejected',
    reason,
    field,
    resource: identity ?? fallbackIdentity(resource),
  });

  const shape = shapeOf(declaration, limits.maxBytes);
  if (shape.problem) return reject(shape.problem.path, shape.problem.reason);
  if (!isObject(declaration)) return reject('extensions.bazaar', 'the declaration must be an object with info and schema');
  const { info, schema } = declaration;
  if (!isObject(info)) return reject('extensions.bazaar.info', 'info is missing or not an object');
  if (!isObject(schema)) return reject('extensions.bazaar.schema', 'schema is missing or not an object');
  const input = info.input;
  if (!isObject(input)) return reject('extensions.bazaar.info.input', 'info.input is missing or not an object');
  const type = input.type;
  if (type !== 'http' && type !== 'mcp') return reject('extensions.bazaar.info.input.type', `must be "http" or "mcp", got ${JSON.stringify(type ?? null)}`);

  // the resource: origin and path (or route template) of paymentPayload.resource.url
  if (resource !== undefined && !isObject(resource)) return reject('resource', 'the resource block must be an object');
  const checked = checkResourceUrl(isObject(resource) ? resource.url : undefined, limits.allowPrivateUrls);
  if ('reason' in checked) return reject('resource.url', checked.reason);
  let routeTemplate: string | undefined;
  if (declaration.routeTemplate !== undefined) {
    if (typeof declaration.routeTemplate !== 'string' || !isValidRouteTemplate(declaration.routeTemplate)) {
      return reject('extensions.bazaar.routeTemplate', 'not a route template: a path of letters, digits, _ / : . - ~ %, without ".." or "://"');
    }
    routeTemplate = declaration.routeTemplate;
  }
  const url = `${checked.url.origin}${routeTemplate ?? checked.url.pathname}`;

  let identity: ResourceIdentity;
  let method: string | undefined;
  let toolName: string | undefined;
  if (type === 'http') {
    method = typeof input.method === 'string' ? input.method : undefined;
    const methods = ['GET', 'HEAD', 'DELETE', 'POST', 'PUT', 'PATCH'];
    if (method === undefined || !methods.includes(method)) {
      const hint = input.method === undefined ? ' (register bazaarResourceServerExtension on the x402ResourceServer: it adds the request\'s method)' : '';
      return reject('extensions.bazaar.info.input.method', `must be one of ${methods.join(', ')}, got ${JSON.stringify(input.method ?? null)}${hint}`, { key: `http ? ${url}`, url, type });
    }
    identity = { key: `http ${method} ${url}`, url, type };
    if (input.bodyType !== undefined) {
      if (!['json', 'form-data', 'text'].includes(input.bodyType as string)) return reject('extensions.bazaar.info.input.bodyType', `must be json, form-data or text, got ${JSON.stringify(input.bodyType)}`, identity);
      if (!['POST', 'PUT', 'PATCH'].includes(method)) return reject('extensions.bazaar.info.input.bodyType', `a body is declared but ${method} is not a body method (POST, PUT, PATCH)`, identity);
    }
  } else {
    toolName = typeof input.toolName === 'string' && input.toolName.length > 0 ? input.toolName : undefined;
    if (toolName === undefined) return reject('extensions.bazaar.info.input.toolName', 'an MCP tool needs a non-empty toolName', { key: `mcp ${url} ?`, url, type });
    if (toolName.length > MAX_TEXT.toolName) return reject('extensions.bazaar.info.input.toolName', `longer than ${MAX_TEXT.toolName} characters`, { key: `mcp ${url} ?`, url, type });
    identity = { key: `mcp ${url} ${toolName}`, url, type };
    if (!isObject(input.inputSchema)) return reject('extensions.bazaar.info.input.inputSchema', 'an MCP tool needs an inputSchema object', identity);
    if (input.transport !== undefined && input.transport !== 'streamable-http' && input.transport !== 'sse') {
      return reject('extensions.bazaar.info.input.transport', `must be streamable-http or sse, got ${JSON.stringify(input.transport)}`, identity);
    }
  }

  const invalid = validateInfo(info, schema);
  if (invalid) return reject(invalid.field, invalid.reason, identity);

  const block = isObject(resource) ? resource : {};
  if (typeof block.description === 'string' && block.description.length > MAX_TEXT.description) {
    return reject('resource.description', `longer than ${MAX_TEXT.description} characters`, identity);
  }
  const metadata = sanitizeResourceServiceMetadata(block as unknown as Parameters<typeof sanitizeResourceServiceMetadata>[0]);
  const listing: Listing = {
    resource: url,
    type,
    x402Version: 2,
    accepts: [acceptOf(payment.requirements)],
    ...(text(block.description, MAX_TEXT.description) ? { description: text(block.description, MAX_TEXT.description) } : {}),
    ...(text(block.mimeType, MAX_TEXT.mimeType) ? { mimeType: text(block.mimeType, MAX_TEXT.mimeType) } : {}),
    ...metadata,
    ...(method ? { method } : {}),
    ...(toolName ? { toolName } : {}),
    ...(routeTemplate ? { routeTemplate } : {}),
    extensions: { bazaar: { info, schema, ...(routeTemplate ? { routeTemplate } : {}) } },
  };
  return { kind: 'accepted', resource: identity, listing };
}

/** The `EXTENSION-RESPONSES` entry for bazaar, as the 2.27 facilitator client reads it. */
export interface BazaarResponse {
  status: 'success' | 'processing' | 'rejected';
  rejectedReason?: string;
}

/**
 * What to tell the merchant about its declaration: rejected (with the field and reason), processing (valid:
 * listed once a payment to it settles), or success (valid and its payment settled: listed).
 */
export function bazaarResponseOf(intake: DeclarationIntake, settled: boolean | 'failed'): BazaarResponse | undefined {
  if (intake.kind === 'none') return undefined;
  if (intake.kind === 'rejected') return { status: 'rejected', rejectedReason: `${intake.field}: ${intake.reason}` };
  if (settled === 'failed') return { status: 'rejected', rejectedReason: 'the payment did not settle: a resource is listed only after a payment to it settled' };
  return { status: settled ? 'success' : 'processing' };
}

/** The `EXTENSION-RESPONSES` header's value: base64 of the JSON object keyed by extension. */
export function extensionResponsesHeader(response: BazaarResponse): string {
  return Buffer.from(JSON.stringify({ [BAZAAR]: response }), 'utf8').toString('base64');
}
