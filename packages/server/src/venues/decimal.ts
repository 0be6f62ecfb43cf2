/**
 * Exact decimals for venue numbers. Venues send prices and sizes as decimal strings ("0.4200",
 * "10.00"); we keep them as integer micro-units (value × 1,000,000) inside, so sums and comparisons
 * are exact, and convert to JS numbers only at the API edge. Six places cover every tick and size
 * increment either venue documents.
 */
export type Micros = number;
export const MICROS = 1_000_000;

const DECIMAL = /^(-)?(\d+)(?:\.(\d+))?$/;

/** "0.4200" -> 420000. Returns undefined for anything that is not a plain decimal within 6 places. */
export function parseMicros(input: string | number | null | undefined): Micros | undefined {
  if (input === null || input === undefined) return undefined;
  if (typeof input === "number") return numberToMicros(input);
  const match = DECIMAL.exec(input.trim());
  if (!match) return undefined;
  const [, sign, whole, fraction = ""] = match;
  // Digits past the sixth must be zeros, or the value is not representable exactly.
  if (fraction.length > 6 && /[^0]/.test(fraction.slice(6))) return undefined;
  const value = Number(whole) * MICROS + Number(fraction.slice(0, 6).padEnd(6, "0"));
  if (!Number.isSafeInteger(value)) return undefined;
  return sign ? -value : value;
}

/**
 * A JSON number (an API body's price or amount), rounded to 6 places so 0.1 + 0.2 style noise does
 * not reject a value. The same result as printing the rounded number and parsing the text, without
 * the text (every order placement parses two).
 */
function numberToMicros(value: number): Micros | undefined {
  if (!Number.isFinite(value)) return undefined;
  const micros = Math.round(value * MICROS);
  if (!Number.isSafeInteger(micros)) return undefined;
  return micros === 0 ? 0 : micros; // never -0
}

export function microsToNumber(value: Micros): number {
  return value / MICROS;
}

/** 420000 -> "0.42" (shortest exact decimal). */
export function formatMicros(value: Micros, minDecimals = 0): string {
  const sign = value < 0 ? "-" : "";
  const abs = Math.abs(value);
  const whole = Math.floor(abs / MICROS);
  let fraction = String(abs % MICROS)
    .padStart(6, "0")
    .replace(/0+$/, "");
  if (fraction.length < minDecimals) fraction = fraction.padEnd(minDecimals, "0");
  return fraction ? `${sign}${whole}.${fraction}` : `${sign}${whole}`;
}

/** 1 − p for a probability in micros: the NO price of a YES price. */
export function complement(price: Micros): Micros {
  return MICROS - price;
}
