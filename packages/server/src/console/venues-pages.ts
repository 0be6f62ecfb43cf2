/** The console's venues pages (to be written). */
import type { ConsolePages } from "./plugin";

export const registerVenuesPages: ConsolePages = (_app, _deps) => {};
