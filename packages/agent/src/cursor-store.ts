/**
 * Where an agent keeps the last account event it handled, so that started again tomorrow it reads
 * on from there (`client.accountEvents({ cursor })`). `FileCursorStore` keeps it in a small JSON
 * file, replaced atomically (write a temporary file, then rename), so a crash mid-write leaves the
 * previous cursor, never a torn one.
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";

export interface CursorStore {
  /** The saved cursor (an event's seq), or undefined when none was saved yet. */
  load(): Promise<number | undefined>;
  save(seq: number): Promise<void>;
}

/** A cursor kept in memory only (tests, short-lived scripts). */
export class MemoryCursorStore implements CursorStore {
  constructor(private seq?: number) {}
  async load() {
    return this.seq;
  }
  async save(seq: number) {
    this.seq = seq;
  }
}

export class FileCursorStore implements CursorStore {
  constructor(readonly file: string) {}

  async load(): Promise<number | undefined> {
    let text: string;
    try {
      text = await readFile(this.file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
    const parsed = JSON.parse(text) as { after?: unknown };
    if (typeof parsed.after !== "number" || !Number.isSafeInteger(parsed.after) || parsed.after < 0)
      throw new Error(`${this.file} does not hold a crossbook event cursor`);
    return parsed.after;
  }

  async save(seq: number): Promise<void> {
    await mkdir(path.dirname(this.file), { recursive: true });
    const temporary = `${this.file}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify({ after: seq, saved_at: new Date().toISOString() })}\n`);
    await rename(temporary, this.file);
  }
}
