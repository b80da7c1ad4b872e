extern "C" __global__ void neg_f32_cvt_f64(const unsigned long long* __restrict__ in0, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a0 = __uint_as_float((unsigned int)in0[i]);
  double d;
  asm volatile("{ .reg .f32 t; neg.f32 t, %1; cvt.f64.f32 %0, t; }" : "=d"(d) : "f"(a0));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void abs_f32_cvt_f64(const unsigned long long* __restrict__ in0, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a0 = __uint_as_float((unsigned int)in0[i]);
  double d;
  asm volatile("{ .reg .f32 t; abs.f32 t, %1; cvt.f64.f32 %0, t; }" : "=d"(d) : "f"(a0));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void neg_f64_cvt_f32(const unsigned long long* __restrict__ in0, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  float d;
  asm volatile("{ .reg .f64 t; neg.f64 t, %1; cvt.rn.f32.f64 %0, t; }" : "=f"(d) : "d"(a0));
  out[i] = (unsigned long long)__float_as_uint(d);
}

extern "C" __global__ void abs_f64_cvt_f32(const unsigned long long* __restrict__ in0, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  float d;
  asm volatile("{ .reg .f64 t; abs.f64 t, %1; cvt.rn.f32.f64 %0, t; }" : "=f"(d) : "d"(a0));
  out[i] = (unsigned long long)__float_as_uint(d);
}

extern "C" __global__ void neg_f32(const unsigned long long* __restrict__ in0, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a0 = __uint_as_float((unsigned int)in0[i]);
  float d;
  asm volatile("{ neg.f32 %0, %1; }" : "=f"(d) : "f"(a0));
  out[i] = (unsigned long long)__float_as_uint(d);
}

extern "C" __global__ void abs_f32(const unsigned long long* __restrict__ in0, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a0 = __uint_as_float((unsigned int)in0[i]);
  float d;
  asm volatile("{ abs.f32 %0, %1; }" : "=f"(d) : "f"(a0));
  out[i] = (unsigned long long)__float_as_uint(d);
}

extern "C" __global__ void neg_f64(const unsigned long long* __restrict__ in0, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double d;
  asm volatile("{ neg.f64 %0, %1; }" : "=d"(d) : "d"(a0));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void abs_f64(const unsigned long long* __restrict__ in0, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double d;
  asm volatile("{ abs.f64 %0, %1; }" : "=d"(d) : "d"(a0));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void neg_f64_add(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double d;
  asm volatile("{ .reg .f64 t; neg.f64 t, %1; add.f64 %0, t, %2; }" : "=d"(d) : "d"(a0), "d"(a1));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void abs_f64_mul(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double d;
  asm volatile("{ .reg .f64 t; abs.f64 t, %1; mul.f64 %0, t, %2; }" : "=d"(d) : "d"(a0), "d"(a1));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void neg_f64_fma(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, const unsigned long long* __restrict__ in2, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double a2 = __longlong_as_double((long long)in2[i]);
  double d;
  asm volatile("{ .reg .f64 t; neg.f64 t, %1; fma.rn.f64 %0, t, %2, %3; }" : "=d"(d) : "d"(a0), "d"(a1), "d"(a2));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void neg_f32_add(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a0 = __uint_as_float((unsigned int)in0[i]);
  float a1 = __uint_as_float((unsigned int)in1[i]);
  float d;
  asm volatile("{ .reg .f32 t; neg.f32 t, %1; add.f32 %0, t, %2; }" : "=f"(d) : "f"(a0), "f"(a1));
  out[i] = (unsigned long long)__float_as_uint(d);
}

extern "C" __global__ void max_f64_ab(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double d;
  asm volatile("{ max.f64 %0, %1, %2; }" : "=d"(d) : "d"(a0), "d"(a1));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void max_f64_ba(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double d;
  asm volatile("{ max.f64 %0, %2, %1; }" : "=d"(d) : "d"(a0), "d"(a1));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void min_f64_ab(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double d;
  asm volatile("{ min.f64 %0, %1, %2; }" : "=d"(d) : "d"(a0), "d"(a1));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void min_f64_ba(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double d;
  asm volatile("{ min.f64 %0, %2, %1; }" : "=d"(d) : "d"(a0), "d"(a1));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void neg_f64_max(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double d;
  asm volatile("{ .reg .f64 t; neg.f64 t, %1; max.f64 %0, t, %2; }" : "=d"(d) : "d"(a0), "d"(a1));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void abs_f64_min(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double d;
  asm volatile("{ .reg .f64 t; abs.f64 t, %1; min.f64 %0, %2, t; }" : "=d"(d) : "d"(a0), "d"(a1));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void max_f32(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a0 = __uint_as_float((unsigned int)in0[i]);
  float a1 = __uint_as_float((unsigned int)in1[i]);
  float d;
  asm volatile("{ max.f32 %0, %1, %2; }" : "=f"(d) : "f"(a0), "f"(a1));
  out[i] = (unsigned long long)__float_as_uint(d);
}

extern "C" __global__ void abs_f32_max(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a0 = __uint_as_float((unsigned int)in0[i]);
  float a1 = __uint_as_float((unsigned int)in1[i]);
  float d;
  asm volatile("{ .reg .f32 t; abs.f32 t, %1; max.f32 %0, t, %2; }" : "=f"(d) : "f"(a0), "f"(a1));
  out[i] = (unsigned long long)__float_as_uint(d);
}

extern "C" __global__ void abs_f64_fma_c(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, const unsigned long long* __restrict__ in2, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double a2 = __longlong_as_double((long long)in2[i]);
  double d;
  asm volatile("{ .reg .f64 t; abs.f64 t, %1; fma.rn.f64 %0, %2, %3, t; }" : "=d"(d) : "d"(a0), "d"(a1), "d"(a2));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void neg_f64_fma_c(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, const unsigned long long* __restrict__ in2, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double a2 = __longlong_as_double((long long)in2[i]);
  double d;
  asm volatile("{ .reg .f64 t; neg.f64 t, %1; fma.rn.f64 %0, %2, %3, t; }" : "=d"(d) : "d"(a0), "d"(a1), "d"(a2));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void abs_f64_fma_imm(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double d;
  asm volatile("{ .reg .f64 t; abs.f64 t, %1; fma.rn.f64 %0, %2, 0dC014000000000000, t; }" : "=d"(d) : "d"(a0), "d"(a1));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void mod5_f64(const unsigned long long* __restrict__ in0, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double d;
  asm volatile("{ .reg .f64 t, q, f, m; abs.f64 t, %1; div.rn.f64 q, t, 0d4014000000000000; cvt.rmi.f64.f64 f, q; mul.f64 m, f, 0d4014000000000000; sub.f64 %0, t, m; }" : "=d"(d) : "d"(a0));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void div3_add(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double d;
  asm volatile("{ .reg .f64 q; div.rn.f64 q, %1, 0d4008000000000000; add.f64 %0, q, %2; }" : "=d"(d) : "d"(a0), "d"(a1));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void add_f64_ba(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double d;
  asm volatile("{ add.f64 %0, %2, %1; }" : "=d"(d) : "d"(a0), "d"(a1));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void sub_f64_ba(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double d;
  asm volatile("{ sub.f64 %0, %2, %1; }" : "=d"(d) : "d"(a0), "d"(a1));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void fma_f64_cab(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, const unsigned long long* __restrict__ in2, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double a2 = __longlong_as_double((long long)in2[i]);
  double d;
  asm volatile("{ fma.rn.f64 %0, %3, %1, %2; }" : "=d"(d) : "d"(a0), "d"(a1), "d"(a2));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void neg_f32_copysign_sign(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a0 = __uint_as_float((unsigned int)in0[i]);
  float a1 = __uint_as_float((unsigned int)in1[i]);
  float d;
  asm volatile("{ .reg .f32 t; neg.f32 t, %1; copysign.f32 %0, t, %2; }" : "=f"(d) : "f"(a0), "f"(a1));
  out[i] = (unsigned long long)__float_as_uint(d);
}

extern "C" __global__ void neg_f32_copysign_mag(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a0 = __uint_as_float((unsigned int)in0[i]);
  float a1 = __uint_as_float((unsigned int)in1[i]);
  float d;
  asm volatile("{ .reg .f32 t; neg.f32 t, %1; copysign.f32 %0, %2, t; }" : "=f"(d) : "f"(a0), "f"(a1));
  out[i] = (unsigned long long)__float_as_uint(d);
}

extern "C" __global__ void neg_f64_split(const unsigned long long* __restrict__ in0, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double d;
  asm volatile("{ .reg .f64 t; .reg .b32 lo, hi; neg.f64 t, %1; mov.b64 {lo, hi}, t; and.b32 hi, hi, 2147483647; mov.b64 %0, {lo, hi}; }" : "=d"(d) : "d"(a0));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void neg_f64_selp(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double d;
  asm volatile("{ .reg .f64 t; .reg .pred p; neg.f64 t, %1; setp.gt.f64 p, %2, 0d0000000000000000; selp.f64 %0, t, %2, p; }" : "=d"(d) : "d"(a0), "d"(a1));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void abs_f32_selp(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a0 = __uint_as_float((unsigned int)in0[i]);
  float a1 = __uint_as_float((unsigned int)in1[i]);
  float d;
  asm volatile("{ .reg .f32 t; .reg .pred p; abs.f32 t, %1; setp.gt.f32 p, %2, 0f00000000; selp.f32 %0, t, %2, p; }" : "=f"(d) : "f"(a0), "f"(a1));
  out[i] = (unsigned long long)__float_as_uint(d);
}

extern "C" __global__ void neg_f32_selp(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a0 = __uint_as_float((unsigned int)in0[i]);
  float a1 = __uint_as_float((unsigned int)in1[i]);
  float d;
  asm volatile("{ .reg .f32 t; .reg .pred p; neg.f32 t, %1; setp.gt.f32 p, %2, 0f00000000; selp.f32 %0, t, %2, p; }" : "=f"(d) : "f"(a0), "f"(a1));
  out[i] = (unsigned long long)__float_as_uint(d);
}

extern "C" __global__ void phi_add_f64_tb(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double d;
  asm volatile("{ .reg .f64 t; .reg .pred p; setp.lt.f64 p, %2, 0d0000000000000000; @p bra $PHI1; add.f64 t, %1, 0d3FF0000000000000; bra.uni $PHI2; $PHI1: mul.f64 t, %1, 0d4000000000000000; $PHI2: add.f64 %0, t, %2; }" : "=d"(d) : "d"(a0), "d"(a1));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void phi_add_f64_bt(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double d;
  asm volatile("{ .reg .f64 t; .reg .pred p; setp.lt.f64 p, %2, 0d0000000000000000; @p bra $PHI1; add.f64 t, %1, 0d3FF0000000000000; bra.uni $PHI2; $PHI1: mul.f64 t, %1, 0d4000000000000000; $PHI2: add.f64 %0, %2, t; }" : "=d"(d) : "d"(a0), "d"(a1));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void phi_mul_f64_tb(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double d;
  asm volatile("{ .reg .f64 t; .reg .pred p; setp.lt.f64 p, %2, 0d0000000000000000; @p bra $PHI1; add.f64 t, %1, 0d3FF0000000000000; bra.uni $PHI2; $PHI1: mul.f64 t, %1, 0d4000000000000000; $PHI2: mul.f64 %0, t, %2; }" : "=d"(d) : "d"(a0), "d"(a1));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void phi_max_f64_bt(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double d;
  asm volatile("{ .reg .f64 t; .reg .pred p; setp.lt.f64 p, %2, 0d0000000000000000; @p bra $PHI1; add.f64 t, %1, 0d3FF0000000000000; bra.uni $PHI2; $PHI1: mul.f64 t, %1, 0d4000000000000000; $PHI2: max.f64 %0, %2, t; }" : "=d"(d) : "d"(a0), "d"(a1));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void phi_sub_f64_bt(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a0 = __longlong_as_double((long long)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double d;
  asm volatile("{ .reg .f64 t; .reg .pred p; setp.lt.f64 p, %2, 0d0000000000000000; @p bra $PHI1; add.f64 t, %1, 0d3FF0000000000000; bra.uni $PHI2; $PHI1: mul.f64 t, %1, 0d4000000000000000; $PHI2: sub.f64 %0, %2, t; }" : "=d"(d) : "d"(a0), "d"(a1));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void cvt_f32_add_f64(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a0 = __uint_as_float((unsigned int)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double d;
  asm volatile("{ .reg .f64 t; cvt.f64.f32 t, %1; add.f64 %0, %2, t; }" : "=d"(d) : "f"(a0), "d"(a1));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void sqrt_f32_cvt_add(const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a0 = __uint_as_float((unsigned int)in0[i]);
  double a1 = __longlong_as_double((long long)in1[i]);
  double d;
  asm volatile("{ .reg .f32 s; .reg .f64 t; sqrt.rn.f32 s, %1; cvt.f64.f32 t, s; add.f64 %0, %2, t; }" : "=d"(d) : "f"(a0), "d"(a1));
  out[i] = (unsigned long long)__double_as_longlong(d);
}

extern "C" __global__ void sqrt_f32(const unsigned long long* __restrict__ in0, unsigned long long* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a0 = __uint_as_float((unsigned int)in0[i]);
  float d;
  asm volatile("{ sqrt.rn.f32 %0, %1; }" : "=f"(d) : "f"(a0));
  out[i] = (unsigned long long)__float_as_uint(d);
}
