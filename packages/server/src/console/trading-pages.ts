/** The console's trading pages (to be written). */
import type { ConsolePages } from "./plugin";

export const registerTradingPages: ConsolePages = (_app, _deps) => {};
