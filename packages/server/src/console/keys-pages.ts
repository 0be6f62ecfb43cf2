/** The console's keys pages (to be written). */
import type { ConsolePages } from "./plugin";

export const registerKeysPages: ConsolePages = (_app, _deps) => {};
