#!/usr/bin/env python3
"""Polynomial coefficients of the kinds (rust/kinds), near-minimax by Chebyshev fits.

Run: python3 rust/kinds/testdata/gen_coeffs.py [name ...]
Needs mpmath. For each approximated function it prints the degree chosen, the
relative error of the fit with its coefficients rounded to the dtype, and Rust
arrays of the coefficients in increasing degree, as the kinds' sources hold them.
"""
import sys
from mpmath import mp, mpf, chebyfit, exp, log, atanh, sqrt, sin, cos, atan, asin, erf, erfc, pi, polyval

mp.prec = 256


def rnd(c, bits):
    with mp.workprec(bits):
        return +c


def lit(c, bits):
    if bits == 53:
        return repr(float(c))
    return '%.9e' % float(c)


FUNCS = {
    # exp(r) = 1 + r + r^2 P(r), |r| <= ln2/2
    'exp': (lambda r: (exp(r) - 1 - r) / r**2, lambda: (-log(2) / 2 * mpf('1.0001'), log(2) / 2 * mpf('1.0001'))),
    # 2^r = 1 + r Q(r), |r| <= 1/2
    'exp2': (lambda r: (exp(r * log(2)) - 1) / r, lambda: (mpf(-0.5), mpf(0.5))),
    # log1p(f) = 2s + s z R(z), s = f/(2+f), z = s^2 <= ((sqrt2-1)/(sqrt2+1))^2
    'log': (lambda z: (2 * atanh(sqrt(z)) - 2 * sqrt(z)) / (z * sqrt(z)),
            lambda: (mpf(0), ((sqrt(2) - 1) / (sqrt(2) + 1))**2 * mpf('1.0001'))),
    # sin(r) = r + r z S(z), z = r^2 <= (pi/4)^2
    'sin': (lambda z: (sin(sqrt(z)) - sqrt(z)) / (z * sqrt(z)), lambda: (mpf(0), (pi / 4)**2 * mpf('1.0001'))),
    # cos(r) = 1 - z/2 + z^2 C(z)
    'cos': (lambda z: (cos(sqrt(z)) - 1 + z / 2) / z**2, lambda: (mpf(0), (pi / 4)**2 * mpf('1.0001'))),
    # atan(t) = t + t z A(z), z = t^2 <= tan(pi/8)^2
    'atan': (lambda z: (atan(sqrt(z)) - sqrt(z)) / (z * sqrt(z)), lambda: (mpf(0), (sqrt(2) - 1)**2 * mpf('1.0001'))),
    # asin(t) = t + t z B(z), z = t^2 <= 1/4
    'asin': (lambda z: (asin(sqrt(z)) - sqrt(z)) / (z * sqrt(z)), lambda: (mpf(0), mpf('0.25') * mpf('1.0001'))),
    # erf(x) = x E(z), z = x^2 <= 1
    'erf': (lambda z: erf(sqrt(z)) / sqrt(z), lambda: (mpf(0), mpf(1))),
    # erfc(x) = exp(-x^2) G(x) on [1, 2], [2, 3.5], [3.5, 6], G in powers of (x - mid)
    'erfc1': (lambda u: erfc(u + mpf('1.5')) * exp((u + mpf('1.5'))**2), lambda: (mpf(-0.5), mpf(0.5))),
    'erfc2': (lambda u: erfc(u + mpf('2.75')) * exp((u + mpf('2.75'))**2), lambda: (mpf(-0.75), mpf(0.75))),
    'erfc3': (lambda u: erfc(u + mpf('4.75')) * exp((u + mpf('4.75'))**2), lambda: (mpf(-1.25), mpf(1.25))),
}

# the f32 exp kind's shorter P (rust/kinds/exp.rs, EXP32_P): exp's function,
# to its own target (TARGETS)
FUNCS['exp32'] = FUNCS['exp']

# Each function's target relative error, by the bits of its precisions.
TARGET = {24: mpf(2)**-29, 53: mpf(2)**-59}
# exp32 is fitted for f32 alone, to 2^-24: r^2 P(r) is within 0.065 of 1,
# so P's error weighs a sixteenth as much in the result.
TARGETS = {'exp32': {24: mpf(2)**-24}}


def fit(name, bits):
    f, iv = FUNCS[name]
    a, b = iv()
    # near 0 the quotients cancel; they are smooth, so nudge the argument off 0
    g = lambda t: f(t) if abs(t) > mpf('1e-25') else f(mpf('1e-25'))
    for n in range(1, 40):
        poly, err = chebyfit(g, [a, b], n + 1, error=True)
        scale = min(abs(g(a)), abs(g(b)), abs(g((a + b) / 2)))
        if err / scale < TARGETS.get(name, TARGET)[bits]:
            break
    coeffs = [rnd(c, bits) for c in reversed(poly)]  # increasing degree
    worst = mpf(0)
    for i in range(2001):
        t = a + (b - a) * i / 2000
        y = g(t)
        p = polyval(list(reversed(coeffs)), t)
        worst = max(worst, abs((p - y) / y))
    return n, coeffs, worst


def main():
    names = sys.argv[1:] or list(FUNCS)
    for name in names:
        for bits in TARGETS.get(name, TARGET):
            n, coeffs, worst = fit(name, bits)
            ty = 'f64' if bits == 53 else 'f32'
            print('// %s %s: degree %d, relative error %.3g (2^%.1f)' % (name, ty, n, float(worst), float(log(worst, 2))))
            print('[%s]' % ', '.join(lit(c, bits) for c in coeffs))


if __name__ == '__main__':
    main()
