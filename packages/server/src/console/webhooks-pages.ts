/** The console's webhooks pages (to be written). */
import type { ConsolePages } from "./plugin";

export const registerWebhooksPages: ConsolePages = (_app, _deps) => {};
