/**
 * The one logger shape every module takes. It is the subset of pino's (and so Fastify's `app.log`)
 * that the services call, so the real logger passes straight in and a test passes a plain object.
 * Fields come first, then the message. A failure goes in `err` (`{ err: error, ...context }`):
 * pino's serializer keeps its type, message and stack, which `String(error)` would drop.
 */
export interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Drops every line: the default where no logger is given (the CLI, tests that do not look). */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
