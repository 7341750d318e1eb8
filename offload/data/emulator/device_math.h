/* The device math intrinsics the emulation runtime mirrors, included by runtime.c: libdevice's (NVVM:
 * rounding modes, flush to zero, approximations, conversions) and ocml's (AMDGPU), as the hardware
 * computes them. Self-contained: C11's <math.h> and <fenv.h>. */

/* ---- libdevice's math intrinsics: rounding modes, flush to zero, approximations ----------------------- */

#pragma STDC FENV_ACCESS ON

static float flushf(float x) { return fpclassify(x) == FP_SUBNORMAL ? copysignf(0.0f, x) : x; }

#define IN_MODE(MODE, T, EXPR)                    \
    {                                             \
        int saved_ = fegetround();                \
        fesetround(MODE);                         \
        volatile T result_ = (EXPR);              \
        fesetround(saved_);                       \
        return result_;                           \
    }

#define ROUNDED_FAMILY(M, MODE)                                                                          \
    EXPORT float __emu_nvvm_add_##M##_f(float a, float b) IN_MODE(MODE, float, a + b)                     \
    EXPORT double __emu_nvvm_add_##M##_d(double a, double b) IN_MODE(MODE, double, a + b)                 \
    EXPORT float __emu_nvvm_sub_##M##_f(float a, float b) IN_MODE(MODE, float, a - b)                     \
    EXPORT double __emu_nvvm_sub_##M##_d(double a, double b) IN_MODE(MODE, double, a - b)                 \
    EXPORT float __emu_nvvm_mul_##M##_f(float a, float b) IN_MODE(MODE, float, a * b)                     \
    EXPORT double __emu_nvvm_mul_##M##_d(double a, double b) IN_MODE(MODE, double, a * b)                 \
    EXPORT float __emu_nvvm_div_##M##_f(float a, float b) IN_MODE(MODE, float, a / b)                     \
    EXPORT double __emu_nvvm_div_##M##_d(double a, double b) IN_MODE(MODE, double, a / b)                 \
    EXPORT float __emu_nvvm_fma_##M##_f(float a, float b, float c) IN_MODE(MODE, float, fmaf(a, b, c))    \
    EXPORT double __emu_nvvm_fma_##M##_d(double a, double b, double c) IN_MODE(MODE, double, fma(a, b, c)) \
    EXPORT float __emu_nvvm_sqrt_##M##_f(float a) IN_MODE(MODE, float, sqrtf(a))                          \
    EXPORT double __emu_nvvm_sqrt_##M##_d(double a) IN_MODE(MODE, double, sqrt(a))                        \
    EXPORT float __emu_nvvm_rcp_##M##_f(float a) IN_MODE(MODE, float, 1.0f / a)                           \
    EXPORT double __emu_nvvm_rcp_##M##_d(double a) IN_MODE(MODE, double, 1.0 / a)                         \
    EXPORT float __emu_nvvm_add_##M##_ftz_f(float a, float b) IN_MODE(MODE, float, flushf(flushf(a) + flushf(b))) \
    EXPORT float __emu_nvvm_sub_##M##_ftz_f(float a, float b) IN_MODE(MODE, float, flushf(flushf(a) - flushf(b))) \
    EXPORT float __emu_nvvm_mul_##M##_ftz_f(float a, float b) IN_MODE(MODE, float, flushf(flushf(a) * flushf(b))) \
    EXPORT float __emu_nvvm_div_##M##_ftz_f(float a, float b) IN_MODE(MODE, float, flushf(flushf(a) / flushf(b))) \
    EXPORT float __emu_nvvm_fma_##M##_ftz_f(float a, float b, float c)                                      \
        IN_MODE(MODE, float, flushf(fmaf(flushf(a), flushf(b), flushf(c))))                                 \
    EXPORT float __emu_nvvm_sqrt_##M##_ftz_f(float a) IN_MODE(MODE, float, flushf(sqrtf(flushf(a))))        \
    EXPORT float __emu_nvvm_rcp_##M##_ftz_f(float a) IN_MODE(MODE, float, flushf(1.0f / flushf(a)))

ROUNDED_FAMILY(rn, FE_TONEAREST)
ROUNDED_FAMILY(rm, FE_DOWNWARD)
ROUNDED_FAMILY(rp, FE_UPWARD)
ROUNDED_FAMILY(rz, FE_TOWARDZERO)

/* Float -> integer: round in the mode, then saturate (NaN -> 0), as PTX cvt does. */
#define TO_INTEGER(NAME, FT, IT, LO, HI, MODE, FLUSH)                                          \
    EXPORT IT __emu_nvvm_##NAME(FT x) {                                                        \
        x = FLUSH(x);                                                                          \
        if (isnan(x)) return 0;                                                                \
        int saved_ = fegetround();                                                             \
        fesetround(MODE);                                                                      \
        volatile FT r = nearbyint(x);                                                          \
        fesetround(saved_);                                                                    \
        if (r <= (FT)(LO)) return (IT)(LO);                                                    \
        if (r >= (FT)(HI)) return (IT)(HI);                                                    \
        return (IT)r;                                                                          \
    }
#define SAME(x) (x)
#define TO_INTEGER_MODES(F, FT, IT, LO, HI, FLUSH, SUFFIX)          \
    TO_INTEGER(F##_rn##SUFFIX, FT, IT, LO, HI, FE_TONEAREST, FLUSH)  \
    TO_INTEGER(F##_rm##SUFFIX, FT, IT, LO, HI, FE_DOWNWARD, FLUSH)   \
    TO_INTEGER(F##_rp##SUFFIX, FT, IT, LO, HI, FE_UPWARD, FLUSH)     \
    TO_INTEGER(F##_rz##SUFFIX, FT, IT, LO, HI, FE_TOWARDZERO, FLUSH)
TO_INTEGER_MODES(f2i, float, int32_t, INT32_MIN, INT32_MAX, SAME, )
TO_INTEGER_MODES(f2ui, float, uint32_t, 0, UINT32_MAX, SAME, )
TO_INTEGER_MODES(f2ll, float, int64_t, INT64_MIN, INT64_MAX, SAME, )
TO_INTEGER_MODES(f2ull, float, uint64_t, 0, UINT64_MAX, SAME, )
TO_INTEGER_MODES(f2i, float, int32_t, INT32_MIN, INT32_MAX, flushf, _ftz)
TO_INTEGER_MODES(f2ui, float, uint32_t, 0, UINT32_MAX, flushf, _ftz)
TO_INTEGER_MODES(f2ll, float, int64_t, INT64_MIN, INT64_MAX, flushf, _ftz)
TO_INTEGER_MODES(f2ull, float, uint64_t, 0, UINT64_MAX, flushf, _ftz)
TO_INTEGER_MODES(d2i, double, int32_t, INT32_MIN, INT32_MAX, SAME, )
TO_INTEGER_MODES(d2ui, double, uint32_t, 0, UINT32_MAX, SAME, )
TO_INTEGER_MODES(d2ll, double, int64_t, INT64_MIN, INT64_MAX, SAME, )
TO_INTEGER_MODES(d2ull, double, uint64_t, 0, UINT64_MAX, SAME, )

/* Integer -> float and double -> float in a rounding mode. */
#define CONVERT_MODES(NAME, FROM, TO, FLUSH)                                                               \
    EXPORT TO __emu_nvvm_##NAME##_rn(FROM x) IN_MODE(FE_TONEAREST, TO, FLUSH((TO)x))                       \
    EXPORT TO __emu_nvvm_##NAME##_rm(FROM x) IN_MODE(FE_DOWNWARD, TO, FLUSH((TO)x))                        \
    EXPORT TO __emu_nvvm_##NAME##_rp(FROM x) IN_MODE(FE_UPWARD, TO, FLUSH((TO)x))                          \
    EXPORT TO __emu_nvvm_##NAME##_rz(FROM x) IN_MODE(FE_TOWARDZERO, TO, FLUSH((TO)x))
CONVERT_MODES(i2f, int32_t, float, SAME)
CONVERT_MODES(ui2f, uint32_t, float, SAME)
CONVERT_MODES(ll2f, int64_t, float, SAME)
CONVERT_MODES(ull2f, uint64_t, float, SAME)
CONVERT_MODES(i2d, int32_t, double, SAME)
CONVERT_MODES(ui2d, uint32_t, double, SAME)
CONVERT_MODES(ll2d, int64_t, double, SAME)
CONVERT_MODES(ull2d, uint64_t, double, SAME)
CONVERT_MODES(d2f, double, float, SAME)
#define D2F_FTZ(M, MODE) EXPORT float __emu_nvvm_d2f_##M##_ftz(double x) IN_MODE(MODE, float, flushf((float)x))
D2F_FTZ(rn, FE_TONEAREST) D2F_FTZ(rm, FE_DOWNWARD) D2F_FTZ(rp, FE_UPWARD) D2F_FTZ(rz, FE_TOWARDZERO)

#pragma STDC FENV_ACCESS OFF

EXPORT float __emu_nvvm_fabs_ftz_f32(float x) { return fabsf(flushf(x)); }
EXPORT float __emu_nvvm_ceil_ftz_f(float x) { return flushf(ceilf(flushf(x))); }
EXPORT float __emu_nvvm_floor_ftz_f(float x) { return flushf(floorf(flushf(x))); }
EXPORT float __emu_nvvm_trunc_ftz_f(float x) { return flushf(truncf(flushf(x))); }
EXPORT float __emu_nvvm_round_ftz_f(float x) { return flushf(roundf(flushf(x))); }
EXPORT float __emu_nvvm_fmin_ftz_f(float a, float b) { return flushf(fminf(flushf(a), flushf(b))); }
EXPORT float __emu_nvvm_fmax_ftz_f(float a, float b) { return flushf(fmaxf(flushf(a), flushf(b))); }
EXPORT float __emu_nvvm_fmin_nan_f(float a, float b) { return isnan(a) || isnan(b) ? NAN : fminf(a, b); }
EXPORT float __emu_nvvm_fmax_nan_f(float a, float b) { return isnan(a) || isnan(b) ? NAN : fmaxf(a, b); }
EXPORT float __emu_nvvm_fmin_ftz_nan_f(float a, float b) { return flushf(__emu_nvvm_fmin_nan_f(flushf(a), flushf(b))); }
EXPORT float __emu_nvvm_fmax_ftz_nan_f(float a, float b) { return flushf(__emu_nvvm_fmax_nan_f(flushf(a), flushf(b))); }
static float saturatef(float x) { return isnan(x) ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
EXPORT float __emu_nvvm_saturate_f(float x) { return saturatef(x); }
EXPORT float __emu_nvvm_saturate_ftz_f(float x) { return saturatef(flushf(x)); }
EXPORT double __emu_nvvm_saturate_d(double x) { return isnan(x) ? 0.0 : x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x; }
/* The approximate forms give the correctly rounded result (the hardware's is within 2 ulp or so). */
EXPORT float __emu_nvvm_sin_approx_f(float x) { return sinf(x); }
EXPORT float __emu_nvvm_sin_approx_ftz_f(float x) { return flushf(sinf(flushf(x))); }
EXPORT float __emu_nvvm_cos_approx_f(float x) { return cosf(x); }
EXPORT float __emu_nvvm_cos_approx_ftz_f(float x) { return flushf(cosf(flushf(x))); }
EXPORT float __emu_nvvm_ex2_approx_f32(float x) { return exp2f(x); }
EXPORT float __emu_nvvm_ex2_approx_ftz_f32(float x) { return flushf(exp2f(flushf(x))); }
EXPORT float __emu_nvvm_ex2_approx_f(float x) { return exp2f(x); }
EXPORT float __emu_nvvm_ex2_approx_ftz_f(float x) { return flushf(exp2f(flushf(x))); }
EXPORT double __emu_nvvm_ex2_approx_d(double x) { return exp2(x); }
EXPORT float __emu_nvvm_lg2_approx_f(float x) { return log2f(x); }
EXPORT float __emu_nvvm_lg2_approx_ftz_f(float x) { return flushf(log2f(flushf(x))); }
EXPORT double __emu_nvvm_lg2_approx_d(double x) { return log2(x); }
EXPORT float __emu_nvvm_rsqrt_approx_f(float x) { return 1.0f / sqrtf(x); }
EXPORT float __emu_nvvm_rsqrt_approx_ftz_f(float x) { return flushf(1.0f / sqrtf(flushf(x))); }
EXPORT double __emu_nvvm_rsqrt_approx_d(double x) { return 1.0 / sqrt(x); }
EXPORT double __emu_nvvm_rsqrt_approx_ftz_d(double x) { return 1.0 / sqrt(x); }
EXPORT float __emu_nvvm_sqrt_approx_f(float x) { return sqrtf(x); }
EXPORT float __emu_nvvm_sqrt_approx_ftz_f(float x) { return flushf(sqrtf(flushf(x))); }
EXPORT float __emu_nvvm_div_approx_f(float a, float b) { return a / b; }
EXPORT float __emu_nvvm_div_approx_ftz_f(float a, float b) { return flushf(flushf(a) / flushf(b)); }
EXPORT double __emu_nvvm_rcp_approx_ftz_d(double x) { return 1.0 / x; }
EXPORT float __emu_nvvm_rcp_approx_ftz_f(float x) { return flushf(1.0f / flushf(x)); }
EXPORT uint16_t __emu_nvvm_f2h_rn(float x) {
    _Float16 h = (_Float16)x;
    uint16_t bits;
    memcpy(&bits, &h, 2);
    return bits;
}
EXPORT uint16_t __emu_nvvm_f2h_rn_ftz(float x) { return __emu_nvvm_f2h_rn(flushf(x)); }
EXPORT int32_t __emu_nvvm_d2i_hi(double x) {
    uint64_t bits;
    memcpy(&bits, &x, 8);
    return (int32_t)(bits >> 32);
}
EXPORT int32_t __emu_nvvm_d2i_lo(double x) {
    uint64_t bits;
    memcpy(&bits, &x, 8);
    return (int32_t)bits;
}
EXPORT double __emu_nvvm_lohi_i2d(int32_t lo, int32_t hi) {
    uint64_t bits = (uint64_t)(uint32_t)lo | (uint64_t)(uint32_t)hi << 32;
    double x;
    memcpy(&x, &bits, 8);
    return x;
}
/* prmt.b32 (default mode): each result byte picks one of the 8 bytes of {b, a}, or its sign. */
EXPORT uint32_t __emu_nvvm_prmt(uint32_t a, uint32_t b, uint32_t selector) {
    uint64_t bytes = (uint64_t)a | (uint64_t)b << 32;
    uint32_t out = 0;
    for (int i = 0; i < 4; ++i) {
        unsigned s = selector >> (4 * i) & 0xf;
        uint8_t v = (uint8_t)(bytes >> (8 * (s & 7)));
        if (s & 8) v = (v & 0x80) ? 0xff : 0;
        out |= (uint32_t)v << (8 * i);
    }
    return out;
}
EXPORT int32_t __emu_nvvm_sad_i(int32_t a, int32_t b, int32_t c) { return (int32_t)((uint32_t)(a > b ? (int64_t)a - b : (int64_t)b - a) + (uint32_t)c); }
EXPORT uint32_t __emu_nvvm_sad_ui(uint32_t a, uint32_t b, uint32_t c) { return (a > b ? a - b : b - a) + c; }
EXPORT int16_t __emu_nvvm_sad_s(int16_t a, int16_t b, int16_t c) { return (int16_t)((a > b ? a - b : b - a) + c); }
EXPORT uint16_t __emu_nvvm_sad_us(uint16_t a, uint16_t b, uint16_t c) { return (uint16_t)((a > b ? a - b : b - a) + c); }
EXPORT int64_t __emu_nvvm_sad_ll(int64_t a, int64_t b, int64_t c) { return (int64_t)((uint64_t)(a > b ? a - b : b - a) + (uint64_t)c); }
EXPORT uint64_t __emu_nvvm_sad_ull(uint64_t a, uint64_t b, uint64_t c) { return (a > b ? a - b : b - a) + c; }

/* ---- AMDGPU math intrinsics ocml uses --------------------------------------------------------------- */

EXPORT float __emu_amdgcn_fract_f32(float x) { return isinf(x) ? NAN : fminf(x - floorf(x), 0x1.fffffep-1f); }
EXPORT double __emu_amdgcn_fract_f64(double x) { return isinf(x) ? NAN : fmin(x - floor(x), 0x1.fffffffffffffp-1); }
EXPORT float __emu_amdgcn_frexp_mant_f32(float x) {
    int e;
    return isinf(x) || isnan(x) ? x : frexpf(x, &e);
}
EXPORT double __emu_amdgcn_frexp_mant_f64(double x) {
    int e;
    return isinf(x) || isnan(x) ? x : frexp(x, &e);
}
EXPORT int32_t __emu_amdgcn_frexp_exp_i32_f32(float x) {
    int e = 0;
    if (isinf(x) || isnan(x)) return 0;
    frexpf(x, &e);
    return e;
}
EXPORT int32_t __emu_amdgcn_frexp_exp_i32_f64(double x) {
    int e = 0;
    if (isinf(x) || isnan(x)) return 0;
    frexp(x, &e);
    return e;
}
EXPORT float __emu_amdgcn_rsq_f32(float x) { return 1.0f / sqrtf(x); }
EXPORT double __emu_amdgcn_rsq_f64(double x) { return 1.0 / sqrt(x); }
/* The class mask bits are llvm.is.fpclass's: sNaN, qNaN, -inf, -normal, -subnormal, -0, +0, +subnormal,
 * +normal, +inf. */
static int fp_class_bit(int kind, int negative, int signaling) {
    switch (kind) {
    case FP_NAN: return signaling ? 0 : 1;
    case FP_INFINITE: return negative ? 2 : 9;
    case FP_NORMAL: return negative ? 3 : 8;
    case FP_SUBNORMAL: return negative ? 4 : 7;
    default: return negative ? 5 : 6;
    }
}
EXPORT int __emu_amdgcn_class_f32(float x, int32_t mask) {
    uint32_t bits;
    memcpy(&bits, &x, 4);
    int signaling = isnan(x) && !(bits & 0x00400000u);
    return (mask >> fp_class_bit(fpclassify(x), signbit(x) != 0, signaling)) & 1;
}
EXPORT int __emu_amdgcn_class_f64(double x, int32_t mask) {
    uint64_t bits;
    memcpy(&bits, &x, 8);
    int signaling = isnan(x) && !(bits & 0x0008000000000000ull);
    return (mask >> fp_class_bit(fpclassify(x), signbit(x) != 0, signaling)) & 1;
}
EXPORT float __emu_amdgcn_fmed3_f32(float a, float b, float c) { return fmaxf(fminf(a, b), fminf(fmaxf(a, b), c)); }
EXPORT double __emu_amdgcn_fmed3_f64(double a, double b, double c) { return fmax(fmin(a, b), fmin(fmax(a, b), c)); }
EXPORT float __emu_amdgcn_sin_f32(float x) { return sinf(x * 6.283185307179586f); }  /* x in revolutions */
EXPORT float __emu_amdgcn_cos_f32(float x) { return cosf(x * 6.283185307179586f); }
EXPORT float __emu_amdgcn_fmul_legacy(float a, float b) { return a == 0.0f || b == 0.0f ? 0.0f : a * b; }
EXPORT float __emu_amdgcn_fma_legacy(float a, float b, float c) { return a == 0.0f || b == 0.0f ? c : fmaf(a, b, c); }
EXPORT uint32_t __emu_amdgcn_ubfe_i32(uint32_t x, uint32_t offset, uint32_t width) {
    offset &= 31, width &= 31;
    if (!width) return 0;
    return offset + width < 32 ? (x << (32 - offset - width)) >> (32 - width) : x >> offset;
}
EXPORT int32_t __emu_amdgcn_sbfe_i32(int32_t x, uint32_t offset, uint32_t width) {
    offset &= 31, width &= 31;
    if (!width) return 0;
    return offset + width < 32 ? (int32_t)((uint32_t)x << (32 - offset - width)) >> (32 - width) : x >> offset;
}

/* 2/pi as 1216 fraction bits, most significant first: what v_trig_preop_f64 reads 53 bits of. */
static const uint32_t TWO_OVER_PI[38] = {
    0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab, 0xdebbc561, 0xb7246e3a,
    0x424dd2e0, 0x06492eea, 0x09d1921c, 0xfe1deb1c, 0xb129a73e, 0xe88235f5, 0x2ebb4484, 0xe99c7026, 0xb45f7e41,
    0x3991d639, 0x835339f4, 0x9c845f8b, 0xbdf9283b, 0x1ff897ff, 0xde05980f, 0xef2f118b, 0x5a0a6d1f, 0x6d367ecf,
    0x27cb09b7, 0x4f463f66, 0x9e5fea2d, 0x7527bac7, 0xebe5f17b, 0x3d0739f7, 0x8a5292ea, 0x6bfb5fb1, 0x1f8d5d08,
    0x56033046, 0xfc7b6bab};

EXPORT double __emu_amdgcn_trig_preop_f64(double x, int32_t segment) {
    uint64_t bits;
    memcpy(&bits, &x, 8);
    int exponent = (int)((bits >> 52) & 0x7ff);
    unsigned shift = (unsigned)(segment & 31) * 53;
    if (exponent > 1077) shift += (unsigned)(exponent - 1077);
    uint64_t m = 0;
    for (unsigned i = 0; i < 53; ++i) {
        unsigned at = shift + i;
        uint64_t bit = at < 1201 ? (TWO_OVER_PI[at / 32] >> (31 - at % 32)) & 1 : 0;
        m = m << 1 | bit;
    }
    int scale = -53 - (int)shift;
    if (exponent >= 1968) scale += 128;
    return ldexp((double)m, scale);
}
