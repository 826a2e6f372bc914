import winston from 'winston';
import { redactSecrets } from './redact';

export type Logger = winston.Logger;

interface LoggerOptions {
  service: string;
  level?: string;
  /** Values that must never appear in a log line (private keys, webhook secret). */
  secrets?: readonly string[];
  /** Where lines go; defaults to stdout. Tests pass a stream to capture them. */
  stream?: NodeJS.WritableStream;
}

/** One JSON object per line, for log shippers; every line names the service that wrote it. */
export function createLogger(options: LoggerOptions): Logger {
  const transport = options.stream
    ? new winston.transports.Stream({ stream: options.stream })
    : new winston.transports.Console();
  return winston.createLogger({
    level: options.level ?? 'info',
    defaultMeta: { service: options.service },
    format: winston.format.combine(
      // an Error logged as the message keeps its stack and cause (the redaction below describes the cause chain)
      winston.format.errors({ stack: true, cause: true }),
      redactSecrets(options.secrets ?? []),
      winston.format.timestamp(),
      winston.format.json(),
    ),
    transports: [transport],
  });
}

/** A logger that writes nothing, for tests that do not look at logs. */
export function createSilentLogger(): Logger {
  return winston.createLogger({ silent: true, transports: [new winston.transports.Console({ silent: true })] });
}
