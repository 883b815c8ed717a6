// What the Overview's activity chart draws, from the engine's series: pure, so it is tested
// without a canvas.
import type { ActivitySeries, Series, Span } from "./types";
import { bytes } from "./format";

export type Metric = "calls" | "errors" | "bytesKept";
export type Grouping = "total" | "server" | "client";

export const METRICS: Record<Metric, string> = {
  calls: "Calls",
  errors: "Errors",
  bytesKept: "Kept out of context",
};

/** Distinct in light and dark (mid tones), in the order groups are listed. */
export const PALETTE = ["#3b82f6", "#f59e0b", "#10b981", "#a855f7", "#ef4444", "#14b8a6", "#64748b"];

export interface ChartData {
  labels: string[];
  datasets: { label: string; data: number[]; color: string }[];
  /** The metric's total over the span, as people read it. */
  total: string;
}

/** A bucket's label: its hour for a day, its weekday and date for a week (local time). */
export function bucketLabel(start: string, span: Span): string {
  const t = new Date(start);
  return span === "day"
    ? t.toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit" })
    : t.toLocaleDateString("en-GB", { weekday: "short", day: "numeric" });
}

/** A value as the metric reads. */
export function metricValue(metric: Metric, n: number): string {
  return metric === "bytesKept" ? bytes(n) : n.toLocaleString("en");
}

export function chartData(a: ActivitySeries, span: Span, metric: Metric, grouping: Grouping): ChartData {
  const groups: Series[] = grouping === "server" ? a.byServer : grouping === "client" ? a.byClient : [a.total];
  const shown = groups.filter((g) => grouping === "total" || g[metric].some((v) => v > 0));
  const sum = a.total[metric].reduce((x, y) => x + y, 0);
  return {
    labels: a.starts.map((s) => bucketLabel(s, span)),
    datasets: shown.map((g, i) => ({
      label: grouping === "total" ? METRICS[metric] : g.name,
      data: g[metric],
      color: grouping === "total" && metric === "errors" ? PALETTE[4] : PALETTE[i % PALETTE.length],
    })),
    total: metricValue(metric, sum),
  };
}
