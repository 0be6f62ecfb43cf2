import type { KeyEnvironment } from "./permissions";

/**
 * Who owns what an API key creates or reads (orders, positions, balances, alerts, webhooks, venue
 * links): its account, in the key's environment. Sandbox and live never share an owner.
 */
export interface Owner {
  accountId: string;
  environment: KeyEnvironment;
}
