/** Every page module of the console, in navigation order (sign-in and sessions are the plugin's own). */
import { registerKeysPages } from "./keys-pages";
import type { ConsolePages } from "./plugin";
import { registerReviewPages } from "./review-pages";
import { registerTradingPages } from "./trading-pages";
import { registerUsagePages } from "./usage-pages";
import { registerVenuesPages } from "./venues-pages";
import { registerWebhooksPages } from "./webhooks-pages";

export const CONSOLE_PAGES: ConsolePages[] = [
  registerKeysPages,
  registerUsagePages,
  registerWebhooksPages,
  registerVenuesPages,
  registerTradingPages,
  registerReviewPages,
];
