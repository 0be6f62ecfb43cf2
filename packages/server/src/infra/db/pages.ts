/**
 * Paginated lists: one page of rows and the total the filter matches (the API's `meta.total`),
 * read together from the same filtered query.
 */
import type { SelectQueryBuilder } from "kysely";

export interface PageRequest {
  limit: number;
  offset: number;
}

/**
 * `filtered` is the query with its conditions and no selection; `ordered` selects and orders the
 * rows (newest first, say); the page is cut from that, and the total counted over `filtered`.
 */
export async function pageWithTotal<DB, TB extends keyof DB, Row>(
  filtered: SelectQueryBuilder<DB, TB, object>,
  ordered: (query: SelectQueryBuilder<DB, TB, object>) => SelectQueryBuilder<DB, TB, Row>,
  page: PageRequest,
): Promise<{ rows: Row[]; total: number }> {
  const [rows, count] = await Promise.all([
    ordered(filtered).limit(page.limit).offset(page.offset).execute(),
    filtered.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow(),
  ]);
  // Generic over the table, the compiler cannot follow the selection's type: the row has `n`.
  return { rows: rows as Row[], total: Number((count as { n: number | string | bigint }).n) };
}
