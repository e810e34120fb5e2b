/* The machine's limits, measured: STREAM-like memory bandwidth (copy and
   triad, on arrays far larger than the last-level cache) and the peak
   throughput of fused multiply-adds in float32 and float64, each on one
   thread and on every thread (OpenMP).

   Usage: limits MIB_PER_ARRAY REPS
   Prints one "name value" line per figure: bandwidth in GB/s (10^9 bytes,
   counted as STREAM does: bytes read plus bytes written, no write-allocate
   traffic), FMA throughput in GFLOP/s (one FMA is two flops). Each figure is
   the best of REPS runs, as STREAM reports. */

#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Bandwidth of c = a and a = b + s * c over n doubles, best of reps. */
static void stream(size_t n, int reps, int threads, const char *tag) {
  double *a = aligned_alloc(64, n * sizeof(double));
  double *b = aligned_alloc(64, n * sizeof(double));
  double *c = aligned_alloc(64, n * sizeof(double));
  if (!a || !b || !c) {
    fprintf(stderr, "limits: cannot allocate 3 x %zu doubles\n", n);
    exit(1);
  }
  omp_set_num_threads(threads);
  /* First touch by the threads that will use each page. */
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) a[i] = 1.0, b[i] = 2.0, c[i] = 0.0;
  double copy = 1e30, triad = 1e30;
  const double s = 3.0;
  for (int r = 0; r < reps; r++) {
    double t = now();
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) c[i] = a[i];
    t = now() - t;
    if (t < copy) copy = t;
    t = now();
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
    t = now() - t;
    if (t < triad) triad = t;
  }
  printf("copy_%s %.3f\n", tag, 2.0 * n * sizeof(double) / copy / 1e9);
  printf("triad_%s %.3f\n", tag, 3.0 * n * sizeof(double) / triad / 1e9);
  /* Keeps the stores observable. */
  if (a[n / 2] == 42.0) puts("#");
  free(a), free(b), free(c);
}

/* CHAINS independent accumulators: enough to cover an FMA's latency (4
   cycles) on two ports. Each step x = x * m + k converges, so no value
   overflows or becomes subnormal. */
#define CHAINS 12
#define STEPS 10000000L

static volatile double sink;

#define FMA_LOOP(VEC, SET1, FMADD, ADD, LANES, FLOAT)                   \
  {                                                                     \
    VEC m = SET1((FLOAT)0.999999), k = SET1((FLOAT)1e-6), acc[CHAINS]; \
    for (int j = 0; j < CHAINS; j++) acc[j] = SET1((FLOAT)j);           \
    for (long i = 0; i < STEPS; i++)                                    \
      for (int j = 0; j < CHAINS; j++) acc[j] = FMADD(acc[j], m, k);    \
    VEC sum = acc[0];                                                   \
    for (int j = 1; j < CHAINS; j++) sum = ADD(sum, acc[j]);            \
    FLOAT out[LANES];                                                   \
    memcpy(out, &sum, sizeof out);                                      \
    sink += out[0];                                                     \
  }

/* One thread's FMA loop of the given width (256 or 512 bits) and dtype (32
   or 64 bits); returns the flops it did. */
static double fma_loop(int width, int bits) {
  if (width == 256 && bits == 32)
    FMA_LOOP(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, 8, float)
  else if (width == 256 && bits == 64)
    FMA_LOOP(__m256d, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_add_pd, 4, double)
#ifdef __AVX512F__
  else if (width == 512 && bits == 32)
    FMA_LOOP(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, 16, float)
  else if (width == 512 && bits == 64)
    FMA_LOOP(__m512d, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_add_pd, 8, double)
#endif
  return 2.0 * CHAINS * (width / bits) * STEPS;
}

/* GFLOP/s of the loop on `threads` threads at once, best of reps. */
static double fma_peak(int width, int bits, int threads, int reps) {
  double best = 0;
  omp_set_num_threads(threads);
  for (int r = 0; r < reps; r++) {
    double t = now(), flops = 0;
#pragma omp parallel reduction(+ : flops)
    flops += fma_loop(width, bits);
    t = now() - t;
    if (flops / t > best) best = flops / t;
  }
  return best / 1e9;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: limits MIB_PER_ARRAY REPS\n");
    return 2;
  }
  size_t n = (size_t)atol(argv[1]) * 1024 * 1024 / sizeof(double);
  int reps = atoi(argv[2]);
  int all = omp_get_num_procs();
  printf("threads_all %d\n", all);
  stream(n, reps, 1, "1");
  stream(n, reps, all, "all");
#ifdef __AVX512F__
  int widths[] = {512, 256};
#else
  int widths[] = {256};
#endif
  for (size_t w = 0; w < sizeof widths / sizeof *widths; w++)
    for (int bits = 32; bits <= 64; bits += 32) {
      printf("fma%d_f%d_1 %.3f\n", widths[w], bits, fma_peak(widths[w], bits, 1, reps));
      printf("fma%d_f%d_all %.3f\n", widths[w], bits, fma_peak(widths[w], bits, all, reps));
    }
  return 0;
}
