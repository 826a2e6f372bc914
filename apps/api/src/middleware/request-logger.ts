import type { RequestHandler } from 'express';
import type { Logger } from '@facilitator/logging';

/** One log line per request, written when the response is finished. */
export function requestLogger(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const level = res.statusCode >= 500 ? 'error' : 'http';
      // skip building the entry when the level is off: formats (and secret redaction) run before filtering
      if (!logger.isLevelEnabled(level)) return;
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      logger.log(level, 'request', {
        requestId: req.id,
        method: req.method,
        path: req.originalUrl.split('?')[0],
        status: res.statusCode,
        durationMs: Math.round(durationMs * 100) / 100,
      });
    });
    next();
  };
}
