import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { GENERATED_FILE, generatedTypes } from "../scripts/generate-types";

describe("generated API types", () => {
  it("match the server's OpenAPI document (run `npm run generate -w @crossbook/agent` when this fails)", async () => {
    expect(readFileSync(GENERATED_FILE, "utf8")).toBe(await generatedTypes());
  });
});
