import { Router } from 'express';

/**
 * Every router of the API matches paths exactly: letter case and trailing slashes included. Express's
 * routers are case-insensitive and lax by default, so `POST /X402/settle` reached the settle route while a
 * check that read `req.path` case-sensitively thought it was another route (issue #22). One spelling per
 * endpoint: anything else is a 404 and reaches no handler.
 */
export function apiRouter(): Router {
  return Router({ caseSensitive: true, strict: true });
}
