/** Small statistics helpers shared by the workloads. */

/** Median of a non-empty list (NaN for an empty one). */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Percentile (0-100) by nearest rank on a sorted copy; NaN for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))]!;
}

/** One matched pair: the same workload run directly and through the tunnel, back to back. */
export interface Pair<T> {
  direct: T;
  tunnel: T;
}

/**
 * Runs `rounds` interleaved pairs (direct, tunnel, direct, tunnel…) so that drift on the
 * machine (thermal, other load) hits both sides alike.
 */
export async function matchedPairs<T>(
  rounds: number,
  run: (side: 'direct' | 'tunnel', round: number) => Promise<T>,
): Promise<Array<Pair<T>>> {
  const pairs: Array<Pair<T>> = [];
  for (let round = 0; round < rounds; round++) {
    const direct = await run('direct', round);
    const tunnel = await run('tunnel', round);
    pairs.push({ direct, tunnel });
  }
  return pairs;
}

/**
 * Like matchedPairs, but odd rounds run the tunnel side first, so a drift within a pair (a
 * store or heap that grows, a neighbour's load that rises) favours neither side. Use an even
 * number of rounds.
 */
export async function alternatingPairs<T>(
  rounds: number,
  run: (side: 'direct' | 'tunnel', round: number) => Promise<T>,
): Promise<Array<Pair<T>>> {
  const pairs: Array<Pair<T>> = [];
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      const direct = await run('direct', round);
      pairs.push({ direct, tunnel: await run('tunnel', round) });
    } else {
      const tunnel = await run('tunnel', round);
      pairs.push({ direct: await run('direct', round), tunnel });
    }
  }
  return pairs;
}

/** Medians of one field over the pairs, plus the median of the per-pair ratios tunnel/direct. */
export function summarise<T>(
  pairs: ReadonlyArray<Pair<T>>,
  field: (value: T) => number,
): { direct: number; tunnel: number; ratio: number } {
  return {
    direct: median(pairs.map((p) => field(p.direct))),
    tunnel: median(pairs.map((p) => field(p.tunnel))),
    ratio: median(pairs.map((p) => field(p.tunnel) / field(p.direct))),
  };
}

/**
 * Geometric mean of positive ratios (each pair's with/without) and its 95% interval, from the
 * mean and standard error of their logarithms; the bounds are NaN below two ratios. A pair's
 * ratio swings far more than any change worth finding, so one figure is read with its interval.
 */
export function geometricMean(ratios: readonly number[]): { mean: number; low: number; high: number } {
  const logs = ratios.map((ratio) => Math.log(ratio));
  const n = logs.length;
  const mean = logs.reduce((sum, x) => sum + x, 0) / n;
  if (n < 2) return { mean: Math.exp(mean), low: Number.NaN, high: Number.NaN };
  const variance = logs.reduce((sum, x) => sum + (x - mean) ** 2, 0) / (n - 1);
  const half = Z_95 * Math.sqrt(variance / n);
  return { mean: Math.exp(mean), low: Math.exp(mean - half), high: Math.exp(mean + half) };
}

/**
 * A distribution-free interval of at least 95% for the median of the population `values` were
 * drawn from: the k-th smallest and k-th largest value, with k the largest rank for which
 * Binomial(n, ½) puts at most 2.5% below it (n = 12 gives the 3rd and the 10th, 96.1%). Pair
 * differences of CPU per request have outliers (a collection, a compile) that a mean and a
 * standard error would let through; order statistics assume nothing of their shape. NaN
 * bounds below six values, where no such interval exists short of the extremes.
 */
export function medianInterval(values: readonly number[]): { low: number; high: number } {
  const n = values.length;
  const sorted = [...values].sort((a, b) => a - b);
  // P(X < k) for X ~ Binomial(n, ½), summed term by term.
  let k = 0;
  let below = 0;
  let term = 0.5 ** n; // P(X = 0)
  while (below + term <= 0.025) {
    below += term;
    k++;
    term = (term * (n - k + 1)) / k;
  }
  if (k === 0) return { low: Number.NaN, high: Number.NaN };
  return { low: sorted[k - 1]!, high: sorted[n - k]! };
}

/** The normal distribution's two-sided 95% quantile. */
const Z_95 = 1.96;

/** Milliseconds since an arbitrary origin, sub-millisecond. */
export function nowMs(): number {
  return performance.now();
}

/** Wall-clock epoch milliseconds with sub-millisecond resolution (comparable across processes on one host). */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}
