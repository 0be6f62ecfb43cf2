import { describe, expect, it } from "vitest";
import { evaluate, loadPairs, prf } from "../../eval/matching/evaluate";

/**
 * The labelled set is the matcher's contract: these are the targets at the auto-accept
 * threshold. A change to the matcher that costs precision or recall fails here, with the mistakes.
 */
describe("the matcher on the labelled pairs (npm run eval:matching)", () => {
  const { records } = loadPairs();
  const result = evaluate(records);

  it("is a set worth measuring on", () => {
    expect(records.length).toBeGreaterThanOrEqual(200);
    const categories = new Set(records.map((r) => r.category));
    expect([...categories].sort()).toEqual([
      "crypto",
      "economics",
      "entertainment",
      "politics",
      "sports",
      "weather",
    ]);
    const negatives = records.filter((r) => r.label !== "identity" && r.label !== "complement");
    expect(negatives.length * 2).toBeGreaterThanOrEqual(records.length);
  });

  it("reaches precision 0.97 and recall 0.85 for identity and complement", () => {
    const overall = prf(result.overall);
    const identity = prf(result.byRelation.get("identity")!);
    const complement = prf(result.byRelation.get("complement")!);
    const detail = result.mistakes.join("\n");
    expect(overall.precision, detail).toBeGreaterThanOrEqual(0.97);
    expect(identity.recall, detail).toBeGreaterThanOrEqual(0.85);
    expect(complement.recall, detail).toBeGreaterThanOrEqual(0.85);
  });
});
