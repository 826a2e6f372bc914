import type { Express, RequestHandler } from 'express';
import { match } from 'path-to-regexp';
import { MethodNotAllowedError, NotFoundError } from '@facilitator/core';

/** A route the app serves: its path pattern, as the routers match it (exact case, no trailing slash), and its methods. */
interface ServedRoute {
  matches(path: string): boolean;
  methods: string[];
}

interface RouterLayer {
  route?: { path: unknown; methods: Record<string, boolean> };
  handle?: { stack?: RouterLayer[] };
}

/** Every route of the routers mounted at the root (api-router.ts), read once from the app's router stack. */
function servedRoutes(app: Express): ServedRoute[] {
  const routes: ServedRoute[] = [];
  const visit = (stack: RouterLayer[]) => {
    for (const layer of stack) {
      if (layer.route && typeof layer.route.path === 'string') {
        const test = match(layer.route.path, { decode: false, end: true, sensitive: true, trailing: false });
        const methods = Object.keys(layer.route.methods).filter((m) => layer.route!.methods[m] && m !== '_all').map((m) => m.toUpperCase());
        routes.push({ matches: (path) => test(path) !== false, methods });
      } else if (layer.handle?.stack) {
        visit(layer.handle.stack);
      }
    }
  };
  visit(((app as unknown as { router: { stack: RouterLayer[] } }).router ?? { stack: [] }).stack);
  return routes;
}

/**
 * The last handler: a path we serve asked with another method is a 405 naming the methods it answers
 * (`Allow`, RFC 9110 §15.5.6), anything else a 404. Express answers neither by itself in our shape.
 */
export function unmatchedRoute(app: Express): RequestHandler {
  let routes: ServedRoute[] | undefined;
  return (req, _res, next) => {
    // read at the first miss: every router is mounted by then
    routes ??= servedRoutes(app);
    const allowed = new Set(routes.filter((r) => r.matches(req.path)).flatMap((r) => r.methods));
    if (allowed.has('GET')) allowed.add('HEAD');
    if (allowed.size > 0 && !allowed.has(req.method)) {
      next(new MethodNotAllowedError(req.method, req.path, [...allowed].sort()));
      return;
    }
    next(new NotFoundError(`no route for ${req.method} ${req.path}`));
  };
}
