import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** HTTP basic auth against one username and password, compared in constant time. */
export function basicAuth(credentials: { username: string; password: string }, realm: string): RequestHandler {
  const expected = digest(`${credentials.username}:${credentials.password}`);
  return (req, res, next) => {
    const header = req.get('authorization') ?? '';
    const presented = header.startsWith('Basic ') ? Buffer.from(header.slice(6), 'base64').toString('utf8') : '';
    if (presented && timingSafeEqual(digest(presented), expected)) return next();
    res.setHeader('WWW-Authenticate', `Basic realm="${realm}", charset="UTF-8"`);
    res.status(401).json({ error: { code: 'unauthorized', message: 'valid credentials are required' } });
  };
}
