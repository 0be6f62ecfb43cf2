/** The console's usage pages (to be written). */
import type { ConsolePages } from "./plugin";

export const registerUsagePages: ConsolePages = (_app, _deps) => {};
