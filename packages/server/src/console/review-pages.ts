/** The console's review pages (to be written). */
import type { ConsolePages } from "./plugin";

export const registerReviewPages: ConsolePages = (_app, _deps) => {};
