export { createLogger, createSilentLogger, type Logger } from './logger';
