/**
 * HTML for the console, escaped by default: `html` is a template tag whose interpolated values are
 * escaped unless they are already `SafeHtml` (another `html` result, or `raw` for markup the
 * console itself wrote). Arrays are joined, `null`/`undefined`/`false` render nothing, so a page
 * can be written as one readable template without a template engine.
 */

export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Part = SafeHtml | string | number | boolean | null | undefined | readonly Part[];

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function render(part: Part): string {
  if (part === null || part === undefined || part === false || part === true) return "";
  if (part instanceof SafeHtml) return part.value;
  if (Array.isArray(part)) return part.map(render).join("");
  return escapeHtml(String(part));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new SafeHtml(out);
}

/** Markup the console wrote itself (never user input). */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

export type { Part as HtmlPart };
