import type { AppViewRoute } from '@bull-board/api/typings/app';
import { ExpressAdapter } from '@bull-board/express';
import type { NextFunction, Request, Response } from 'express';

// Bull Board's page asks Google Fonts for IBM Plex; the dashboard must work on a machine that reaches no
// internet (and must not tell a third party who opens it), so the link goes and the CSS falls back to the
// system's sans-serif and monospace fonts. Every other asset Bull Board uses is served from its package.
const EXTERNAL_STYLESHEET = /<link\b[^>]*href="https?:\/\/[^"]*"[^>]*>\s*/gi;

export function withoutExternalStylesheets(html: string): string {
  return html.replace(EXTERNAL_STYLESHEET, '');
}

/** Bull Board's Express adapter, rendering its page without links that leave the machine. */
export class SelfContainedExpressAdapter extends ExpressAdapter {
  override setEntryRoute(routeDef: AppViewRoute): ExpressAdapter {
    const viewHandler = (_req: Request, res: Response, next: NextFunction) => {
      const { name, params } = routeDef.handler({ basePath: this.basePath, uiConfig: this.uiConfig });
      res.render(name, params, (err: Error | null, html: string) => (err ? next(err) : res.type('html').send(withoutExternalStylesheets(html))));
    };
    const routes = Array.isArray(routeDef.route) ? routeDef.route : [routeDef.route];
    for (const route of routes) this.app.get(route, viewHandler);
    return this;
  }
}
