// Numbers as people read them.

const UNITS = ["B", "KB", "MB", "GB", "TB"];

/** 1536 → "1.5 KB" (powers of 1024, one decimal below 10). */
export function bytes(n: number): string {
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = unit === 0 || value >= 10 ? 0 : 1;
  return `${value.toFixed(digits)} ${UNITS[unit]}`;
}

/** "1 client", "2 clients". */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString("en")} ${n === 1 ? one : many}`;
}

/** Splits a command line typed in one field into words, honouring simple quotes. */
export function words(line: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const m of line.matchAll(re)) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

/** The inverse of `words`: quotes words that hold spaces. */
export function line(parts: string[]): string {
  return parts.map((p) => (/\s|^$/.test(p) ? `"${p}"` : p)).join(" ");
}
