/* The host check of nx.cpu, compiled for the plain x86-64 baseline so that
   it runs on any host: which of the instructions the kernels are compiled
   for (AVX2, FMA, F16C, BMI2, SSE4.2, POPCNT, with the system saving the AVX
   registers, which GCC's AVX2 test includes) this host lacks. */

#include <string.h>
#include <caml/mlvalues.h>
#include <caml/alloc.h>

value nx_cpu_host_missing(value unit)
{
  char missing[64] = "";
  (void)unit;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2")) strcat(missing, "AVX2 ");
  if (!__builtin_cpu_supports("fma")) strcat(missing, "FMA ");
  if (!__builtin_cpu_supports("f16c")) strcat(missing, "F16C ");
  if (!__builtin_cpu_supports("bmi2")) strcat(missing, "BMI2 ");
  if (!__builtin_cpu_supports("sse4.2")) strcat(missing, "SSE4.2 ");
  if (!__builtin_cpu_supports("popcnt")) strcat(missing, "POPCNT ");
#endif
  return caml_copy_string(missing);
}
