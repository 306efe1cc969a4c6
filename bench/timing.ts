/**
 * Wall-clock timing for the CPU benches (bench/cpu-matmul.ts, bench/cpu-kernels.ts): one warm-up call, then
 * `runs` timed calls with performance.now(), each awaited, so that launches on worker threads are timed to
 * their end.
 */

export async function timeAsync(fn: () => Promise<unknown> | unknown, runs: number): Promise<number[]> {
  await fn();
  const out: number[] = [];
  for (let r = 0; r < runs; r++) {
    const start = performance.now();
    await fn();
    out.push(performance.now() - start);
  }
  return out;
}
