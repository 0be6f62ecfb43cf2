/**
 * The OpenAPI document as the running code declares it: built from an app on an in-memory store,
 * so `crossbook openapi` and the drift test need no database.
 */
import { buildApp } from "./app";
import { testConfig } from "./config";
import { createRuntime } from "./runtime";

export async function generateOpenApi(): Promise<unknown> {
  const runtime = await createRuntime(testConfig());
  try {
    const { app } = await buildApp(runtime);
    const document = app.swagger();
    await app.close();
    return document;
  } finally {
    await runtime.close();
  }
}
