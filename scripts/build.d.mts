/** Bundles the server into packages/server/dist (see build.mjs). */
export function buildServer(): Promise<void>;
