#!/usr/bin/env python3
"""Reference tables of the c64 complex kinds' tests (rust/kinds/complex), from mpmath.

Run from anywhere: python3 rust/kinds/testdata/gen_complex_ref.py [name ...]
Writes c<name>.bin beside this script: little-endian f64 records
(re, im, want_re_hi, want_re_lo, want_im_hi, want_im_lo) for a unary kind and
(z_re, z_im, w_re, w_im, want_re_hi, want_re_lo, want_im_hi, want_im_lo) for
pow, want_hi + want_lo being the exact part to about 2^-106 relative,
want_hi = +-inf where the part overflows.

mpmath has no signed zeros (and its side of a cut is not always C99's): a
zero part is evaluated as +-2^-250 times the other part, of the zero's sign,
which mpmath keeps at its working precision (400 bits beyond the span of the
parts' exponents, whose every digit its algorithms need); that puts a point
of a branch cut on the side C99 gives it and moves any value by far less than
an ulp. Left out are the points where that would mislead: exact zero results
(log(1 + 0i), acos(1 - 0i), ...) and the poles of atanh and atan on the axes.

The arguments are deterministic: a log-uniform sweep of the whole range,
uniform points, and hard cases by kind (branch points and cuts, the unit
circle, overflow thresholds, multiples of pi/2, the algorithms' crossovers,
integral exponents of pow), all finite.
"""
import math
import os
import random
import struct
import sys

from mpmath import mp, mpf, mpc

HERE = os.path.dirname(os.path.abspath(__file__))
MAXF = mpf(2)**1024
NUDGE = mpf(2)**-250
PI = math.pi


def split(v):
    if abs(v) >= MAXF * (1 - mpf(2)**-54):
        return (float('inf') if v > 0 else float('-inf')), 0.0
    hi = float(v)
    return hi, float(v - hi)


def arg(x, other):
    """An mpf of the float x, a zero replaced by a nudge of its sign."""
    if x == 0:
        return math.copysign(1, x) * abs(mpf(other)) * NUDGE
    return mpf(x)


def precision(*xs):
    """400 bits beyond the span of the exponents of the nonzero parts (and 1)."""
    es = [0] + [math.frexp(x)[1] for x in xs if x != 0]
    return 400 + max(es) - min(es)


def ref(f, x, y, *w):
    """The parts of f(x + iy) (or f(x + iy, w) for pow, whose exponent's zeros
    stay exact: pow is entire in it)."""
    with mp.workprec(precision(x, y, *w)):
        z = mpc(arg(x, y), arg(y, x))
        v = f(z, mpc(*w)) if w else f(z)
        return split(v.real) + split(v.imag)


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def sign(self):
        return self.r.choice((-1.0, 1.0))

    def logu(self, lo, hi):
        """A random sign times 2^u, u uniform in [lo, hi]."""
        return self.sign() * 2.0**self.r.uniform(lo, hi)

    def u(self, lo, hi):
        return self.r.uniform(lo, hi)

    def zero(self):
        return self.sign() * 0.0

    def tiny(self):
        return self.logu(-1074, -30)

    def small(self):
        """A zero, a tiny or a small part."""
        return self.r.choice((self.zero, self.tiny, lambda: self.logu(-30, -1)))()

    def wide(self, n):
        return [(self.logu(-1074, 1023), self.logu(-1074, 1023)) for _ in range(n)]

    def box(self, n, a, b=None):
        b = a if b is None else b
        return [(self.u(-a, a), self.u(-b, b)) for _ in range(n)]

    def pio2(self):
        """A double near a multiple of pi/2, the multiple up to 2^30 or one near 2^1000."""
        k = self.r.choice([1, 2, 3, 5, 7, 10, 100, 12345, 2**20, 2**30, 6381956970095103 * 2**797])
        with mp.workprec(2000):
            x = float(k * mp.pi / 2)
        return self.sign() * x * (1 + self.r.choice((0, 1, -1)) * 2.0**-52)


def swap(pairs):
    return [(b, a) for a, b in pairs]


def expish(g):
    """Arguments of exp; sinh, cosh and tanh take them, sin, cos and tan swapped."""
    p = g.wide(250)
    p += [(g.u(-745, 709.7), g.u(-10, 10)) for _ in range(250)]
    p += g.box(150, 1, 4)
    p += [(g.u(-40, 40), g.u(-10, 10)) for _ in range(80)]
    p += [(g.sign() * g.u(18, 30), g.u(-4, 4)) for _ in range(40)]
    p += [(g.u(709.5, 754), g.pio2()) for _ in range(50)]
    p += [(-g.u(700, 760), g.u(-4, 4)) for _ in range(50)]
    p += [(g.u(-5, 5), g.logu(20, 1023)) for _ in range(50)]
    p += [(g.u(-3, 3), g.pio2()) for _ in range(50)]
    p += [(g.u(-30, 30), g.small()) for _ in range(50)]
    p += [(g.small(), g.u(-30, 30)) for _ in range(40)]
    p += [(g.tiny(), g.tiny()) for _ in range(30)]
    return p


def logish(g):
    p = g.wide(250)
    p += g.box(200, 4)
    for _ in range(250):
        t = g.u(0, 2 * PI)
        x, y = math.cos(t), math.sin(t)
        s = g.r.choice((1, 1, 1 + g.logu(-60, -20)))
        p.append((x * s, y * s))
    p += [(1 + g.logu(-60, -1), g.small()) for _ in range(60)]
    p += [(-g.logu(-60, 60), g.small()) for _ in range(60)]
    p += [(g.logu(900, 1023), g.logu(900, 1023)) for _ in range(20)]
    p += [(g.logu(-1074, -1000), g.logu(-1074, -1000)) for _ in range(20)]
    for a, b in [(0.6, 0.8), (0.28, 0.96), (0.8, 0.6), (5 / 13, 12 / 13), (0.7071067811865476, 0.7071067811865475)]:
        for _ in range(8):
            p.append((g.sign() * a * (1 + g.r.randint(-4, 4) * 2.0**-53),
                      g.sign() * b * (1 + g.r.randint(-4, 4) * 2.0**-53)))
    p += [(g.logu(-60, 60), g.zero()) for _ in range(20)]
    p += [(g.zero(), g.logu(-60, 60)) for _ in range(20)]
    return p


def sqrtish(g):
    p = g.wide(250)
    p += g.box(200, 4)
    p += [(-g.logu(-60, 60), g.small()) for _ in range(100)]
    p += [(g.small(), g.logu(-60, 60)) for _ in range(60)]
    p += [(g.logu(1015, 1023), g.logu(900, 1023)) for _ in range(40)]
    p += [(g.logu(-1074, -1015), g.logu(-1074, -1015)) for _ in range(40)]
    p += [(g.logu(-30, 30), g.logu(-30, 30)) for _ in range(100)]
    p += [(-2.0**g.u(0, 60), g.logu(-60, 0)) for _ in range(100)]
    p += [(2.0**g.u(-60, 60), g.zero()) for _ in range(50)]
    return p


def asinish(g):
    """Arguments of asin, acos, acosh and atanh (cuts on the real axis); asinh
    and atan take them swapped."""
    p = g.wide(250)
    p += g.box(200, 4)
    p += [(g.sign() * (1 + g.logu(-60, -1)), g.small()) for _ in range(120)]
    p += [(g.sign() * (1 + g.logu(-60, -1)), g.logu(-60, 0)) for _ in range(60)]
    p += [(g.sign() * 2.0**g.u(0, 1000), g.small()) for _ in range(100)]
    p += [(g.u(-1, 1), g.small()) for _ in range(60)]
    p += [(g.logu(24, 30), g.logu(-10, 30)) for _ in range(40)]
    p += [(g.logu(-10, 30), g.logu(24, 30)) for _ in range(40)]
    p += [(g.u(-1.6, 1.6), g.u(-1.2, 1.2)) for _ in range(80)]
    p += [(g.tiny(), g.logu(-60, 2)) for _ in range(30)]
    p += [(g.logu(-60, 2), g.tiny()) for _ in range(30)]
    p += [(g.zero(), g.logu(-60, 60)) for _ in range(30)]
    return p


def atanhish(g):
    p = asinish(g)[:900]
    for _ in range(60):
        t = g.u(0, 2 * PI)
        p.append((math.cos(t), math.sin(t)))
    p += [(g.logu(490, 510), g.logu(-10, 510)) for _ in range(30)]
    p += [(g.sign() * (1 + g.logu(-480, -440)), g.logu(-480, -440)) for _ in range(30)]
    return p


def powish(g):
    p = []

    def polar(r, t):
        return (r * math.cos(t), r * math.sin(t))

    for _ in range(250):
        p.append(polar(2.0**g.u(-17, 17), g.u(-PI, PI)) + (g.u(-4, 4), g.u(-4, 4)))
    for _ in range(100):
        p.append(polar(1 + g.logu(-40, -3), g.u(-PI, PI)) + (g.u(-4, 4), g.u(-4, 4)))
    for _ in range(100):
        p.append((g.u(-4, 4), g.u(-4, 4), float(g.r.choice([-10, -5, -3, -2, -1, 2, 3, 4, 5, 7, 10])), 0.0))
    for _ in range(60):
        n = g.r.randint(11, 1000) * g.sign()
        p.append(polar(2.0**g.u(-300 / abs(n), 300 / abs(n)), g.u(-PI, PI)) + (n, g.zero()))
    for _ in range(80):
        p.append((2.0**g.u(-60, 60), g.zero(), g.u(-8, 8), g.zero()))
    for _ in range(80):
        p.append((-2.0**g.u(-20, 20), g.zero(), g.u(-4, 4), g.small()))
    for _ in range(80):
        p.append(polar(2.0**g.u(-17, 17), g.u(-PI, PI)) + (g.zero(), g.u(-4, 4)))
    for _ in range(60):
        p.append(polar(2.0**g.u(-1000, 1000), g.u(-PI, PI)) + (g.logu(-20, -2), g.logu(-20, -2)))
    for _ in range(50):
        w = g.logu(2, 7)
        p.append(polar(2.0**g.u(-2, 2), g.u(-PI, PI)) + (w, g.u(-1, 1)))
    return p


# The poles on the axes, which a nudge would make finite.
SINGULAR = {
    'atanh': lambda x, y: abs(x) == 1 and y == 0,
    'atan': lambda x, y: abs(y) == 1 and x == 0,
}

UNARY = {
    'exp': (mp.exp, expish, False),
    'log': (mp.log, logish, False),
    'sqrt': (mp.sqrt, sqrtish, False),
    'sinh': (mp.sinh, expish, False),
    'cosh': (mp.cosh, expish, False),
    'tanh': (mp.tanh, expish, False),
    'sin': (mp.sin, expish, True),
    'cos': (mp.cos, expish, True),
    'tan': (mp.tan, expish, True),
    'asin': (mp.asin, asinish, False),
    'acos': (mp.acos, asinish, False),
    'acosh': (mp.acosh, asinish, False),
    'asinh': (mp.asinh, asinish, True),
    'atanh': (mp.atanh, atanhish, False),
    'atan': (mp.atan, atanhish, True),
}


def main():
    names = sys.argv[1:]
    for seed, (name, (f, gen, swapped)) in enumerate(UNARY.items()):
        if names and name not in names:
            continue
        pairs = gen(Gen(1000 + seed))
        if swapped:
            pairs = swap(pairs)
        kept = 0
        with open(os.path.join(HERE, 'c' + name + '.bin'), 'wb') as out:
            for x, y in pairs:
                if SINGULAR.get(name, lambda x, y: False)(x, y):
                    continue
                want = ref(f, x, y)
                # An exact zero result (log(1 + 0i), acos(1 - 0i), ...) would
                # be measured against the nudge's effect: the specials test it.
                if (x == 0 or y == 0) and math.hypot(want[0], want[2]) < max(abs(x), abs(y)) * 2.0**-100:
                    continue
                out.write(struct.pack('<6d', x, y, *want))
                kept += 1
        print(name, kept)
    if not names or 'pow' in names:
        quads = powish(Gen(999))
        with open(os.path.join(HERE, 'cpow.bin'), 'wb') as out:
            for q in quads:
                out.write(struct.pack('<8d', *q, *ref(mp.power, *q)))
        print('pow', len(quads))


if __name__ == '__main__':
    main()
