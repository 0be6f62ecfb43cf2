/**
 * Key types and what each may do. `read` also grants the account-level `manage_webhooks` and
 * `manage_alerts` (a read-only agent can still register where its notifications go); `admin` keys
 * hold everything, including `manage_keys` and `admin` (curation of shared data such as matches).
 */
export const KEY_TYPES = ["read_only", "trading", "admin", "agent"] as const;
export type KeyType = (typeof KEY_TYPES)[number];

export const AGENT_PERMISSIONS = ["read", "trade", "manage_orders"] as const;
export type AgentPermission = (typeof AGENT_PERMISSIONS)[number];

export const PERMISSIONS = [
  "read",
  "trade",
  "manage_orders",
  "manage_webhooks",
  "manage_alerts",
  "manage_keys",
  "admin",
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const ENVIRONMENTS = ["live", "sandbox"] as const;
export type KeyEnvironment = (typeof ENVIRONMENTS)[number];

/** The spec's spellings (`Read-Only`, `Trading`, `Admin`) and ours, to our canonical type. */
export function normalizeKeyType(input: string): KeyType | undefined {
  const folded = input.trim().toLowerCase().replace(/[-\s]/g, "_");
  if (folded === "readonly") return "read_only";
  return (KEY_TYPES as readonly string[]).includes(folded) ? (folded as KeyType) : undefined;
}

/** The permissions stored for a new key: fixed by type, chosen only for agent keys. */
export function grantedPermissions(
  type: KeyType,
  chosen: readonly AgentPermission[] | undefined,
): Permission[] {
  switch (type) {
    case "read_only":
      return ["read"];
    case "trading":
      return ["read", "trade", "manage_orders"];
    case "admin":
      return [...PERMISSIONS];
    case "agent":
      return [...new Set(chosen && chosen.length > 0 ? chosen : (["read"] as AgentPermission[]))];
  }
}

/** What a key can actually do: its stored permissions plus what `read` implies. */
export function effectivePermissions(stored: readonly Permission[]): Set<Permission> {
  const set = new Set<Permission>(stored);
  if (set.has("read")) {
    set.add("manage_webhooks");
    set.add("manage_alerts");
  }
  return set;
}
