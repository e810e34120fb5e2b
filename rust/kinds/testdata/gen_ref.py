#!/usr/bin/env python3
"""Reference tables of the f64 kinds' tests (rust/kinds), from mpmath.

Run from anywhere: python3 rust/kinds/testdata/gen_ref.py [name ...]
Writes <name>.bin beside this script: little-endian f64 records
(x, want_hi, want_lo) for a unary kind and (x, y, want_hi, want_lo) for a
binary one (atan2 takes (y, x) in that order), want_hi + want_lo being the
exact value to about 2^-106 relative, want_hi = +-inf where it overflows.
The arguments are deterministic: a sweep through the bit patterns of the
domain (log-uniform), uniform random points from a fixed seed, and hard cases.
"""
import os
import random
import struct
import sys

from mpmath import mp, mpf

HERE = os.path.dirname(os.path.abspath(__file__))
MAXF = mpf(2)**1024


def key(x):  # order-preserving integer of a float
    b = struct.unpack('<q', struct.pack('<d', x))[0]
    return b if b >= 0 else -(b & 0x7fffffffffffffff)


def unkey(k):
    b = k if k >= 0 else (-k) | (1 << 63)
    return struct.unpack('<d', struct.pack('<Q', b & 0xffffffffffffffff))[0]


def sweep(lo, hi, n):
    a, b = key(lo), key(hi)
    return [unkey(a + (b - a) * i // (n - 1)) for i in range(n)]


def uniform(rng, lo, hi, n):
    return [rng.uniform(lo, hi) for _ in range(n)]


def near(rng, centre, n, rel=2.0**-20):
    return [centre * (1 + rng.uniform(-rel, rel)) for _ in range(n)]


def split(v):
    if abs(v) >= MAXF * (1 - mpf(2)**-54):
        return (float('inf') if v > 0 else float('-inf')), 0.0
    hi = float(v)
    return hi, float(v - hi)


def ref1(f, x):
    e = mp.mpf(x)
    extra = max(0, int(mp.log(abs(e), 2)) if e != 0 else 0)
    with mp.workprec(200 + extra):
        return split(f(mp.mpf(x)))


def pio2_multiples(n):
    out = []
    for k in [1, 2, 3, 4, 5, 7, 10, 100, 1000, 12345, 2**20, 2**30, 6381956970095103 * 2**797]:
        for sgn in (1, -1):
            with mp.workprec(2000):
                v = sgn * k * mp.pi / 2
            x = float(v)
            out += [x, float.fromhex(x.hex()) * (1 + 2.0**-52), x * (1 - 2.0**-52)]
    out += [6381956970095103 * 2.0**797, 5.319372648326541e+255, 1e22, 1e300, 1.7976931348623157e308]
    return out[:n]


def spec():
    rng = random.Random(20240611)
    tiny = [5e-324, 1e-310, 2.2250738585072014e-308, 1e-300, 1e-20, 2.0**-30]
    tinys = tiny + [-t for t in tiny]
    return {
        'exp': (mp.exp, sweep(-746.0, 710.0, 4000) + uniform(rng, -746.0, 710.0, 5000) +
                uniform(rng, -1.0, 1.0, 800) + [709.782712893384, 709.7827128933839, -745.1332191019411,
                -745.1332191019412, -708.3964185322641, -708.39641853226408, -744.44007192138126] + tinys),
        'log': (mp.log, sweep(5e-324, 1.7976931348623157e308, 4000) + uniform(rng, 0.5, 2.0, 3000) +
                [1 + rng.uniform(-1, 1) * 2.0**-rng.randint(1, 52) for _ in range(2500)] +
                [2.0**k for k in range(-1074, 1024, 37)] + [0.7071067811865476, 1.4142135623730951]),
        'exp2': (lambda x: mp.power(2, x), sweep(-1076.0, 1025.0, 2000) + uniform(rng, -1076.0, 1025.0, 1800) +
                 [float(k) for k in range(-1080, 1030, 7)]),
        'log2': (lambda x: mp.log(x, 2), sweep(5e-324, 1.7976931348623157e308, 2000) + uniform(rng, 0.5, 2.0, 1000) +
                 [1 + rng.uniform(-1, 1) * 2.0**-rng.randint(1, 52) for _ in range(900)]),
        'expm1': (mp.expm1, sweep(-40.0, 710.0, 2000) + uniform(rng, -40.0, 710.0, 800) + uniform(rng, -2.0, 2.0, 1100) + tinys),
        'log1p': (mp.log1p, sweep(-1.0, 1.7976931348623157e308, 2000) + uniform(rng, -1.0, 2.0, 1900) + tinys),
        'sin': (mp.sin, sweep(-1.7976931348623157e308, 1.7976931348623157e308, 1600) + uniform(rng, -10.0, 10.0, 800) +
                uniform(rng, -1e6, 1e6, 800) + pio2_multiples(200) + tinys),
        'cos': (mp.cos, sweep(-1.7976931348623157e308, 1.7976931348623157e308, 1600) + uniform(rng, -10.0, 10.0, 800) +
                uniform(rng, -1e6, 1e6, 800) + pio2_multiples(200) + tinys),
        'tan': (mp.tan, sweep(-1.7976931348623157e308, 1.7976931348623157e308, 1600) + uniform(rng, -10.0, 10.0, 800) +
                uniform(rng, -1e6, 1e6, 800) + pio2_multiples(200) + tinys),
        'asin': (mp.asin, sweep(-1.0, 1.0, 1500) + uniform(rng, -1.0, 1.0, 1000) + tinys),
        'acos': (mp.acos, sweep(-1.0, 1.0, 1500) + uniform(rng, -1.0, 1.0, 1000) + tinys),
        'atan': (mp.atan, sweep(-1.7976931348623157e308, 1.7976931348623157e308, 1500) + uniform(rng, -4.0, 4.0, 1000) + tinys),
        'sinh': (mp.sinh, sweep(-711.0, 711.0, 1500) + uniform(rng, -711.0, 711.0, 500) + uniform(rng, -3.0, 3.0, 500) + tinys),
        'cosh': (mp.cosh, sweep(-711.0, 711.0, 1500) + uniform(rng, -711.0, 711.0, 500) + uniform(rng, -3.0, 3.0, 500) + tinys),
        'tanh': (mp.tanh, sweep(-30.0, 30.0, 1500) + uniform(rng, -3.0, 3.0, 1000) + tinys),
        'asinh': (mp.asinh, sweep(-1.7976931348623157e308, 1.7976931348623157e308, 1500) + uniform(rng, -4.0, 4.0, 1000) + tinys),
        'acosh': (mp.acosh, sweep(1.0, 1.7976931348623157e308, 1500) + uniform(rng, 1.0, 4.0, 1000)),
        'atanh': (mp.atanh, sweep(-1.0, 1.0, 1500) + uniform(rng, -1.0, 1.0, 1000) + tinys),
        'erf': (mp.erf, sweep(-7.0, 7.0, 1500) + uniform(rng, -7.0, 7.0, 1000) + tinys),
    }


def spec2():
    rng = random.Random(7)

    def pairs(f, n):
        return [f() for _ in range(n)]

    def signed_logu(lo, hi):
        return rng.choice((-1, 1)) * 2.0**rng.uniform(lo, hi)

    pw = pairs(lambda: (2.0**rng.uniform(-1074, 1023), rng.uniform(-2, 2)), 1000)
    pw += pairs(lambda: (rng.uniform(0, 4), rng.uniform(-300, 300)), 800)
    pw += pairs(lambda: (1 + rng.uniform(-1, 1) * 2.0**-rng.randint(10, 40), signed_logu(0, 60)), 400)
    pw += pairs(lambda: (-rng.uniform(0, 4), float(rng.randint(-300, 300))), 300)
    # results near the overflow and underflow thresholds
    for _ in range(500):
        x = rng.uniform(1.1, 100.0)
        with mp.workprec(120):
            y = float(rng.choice((709.7, -708.0, -744.0)) / mp.log(x))
        pw.append((x, y))
    return {
        'atan2': (mp.atan2, pairs(lambda: (signed_logu(-1074, 1023), signed_logu(-1074, 1023)), 1200) +
                  pairs(lambda: (rng.uniform(-2, 2), rng.uniform(-2, 2)), 1300)),
        'pow': (mp.power, pw),
        'hypot': (mp.hypot, pairs(lambda: (signed_logu(-1074, 1023), signed_logu(-1074, 1023)), 1200) +
                  pairs(lambda: (signed_logu(-10, 10), signed_logu(-10, 10)), 1300)),
    }


def main():
    names = sys.argv[1:]
    s1, s2 = spec(), spec2()
    for name, (f, xs) in s1.items():
        if names and name not in names:
            continue
        with open(os.path.join(HERE, name + '.bin'), 'wb') as out:
            for x in xs:
                out.write(struct.pack('<3d', x, *ref1(f, x)))
        print(name, len(xs))
    for name, (f, ps) in s2.items():
        if names and name not in names:
            continue
        with open(os.path.join(HERE, name + '.bin'), 'wb') as out:
            for a, b in ps:
                with mp.workprec(200):
                    hi, lo = split(f(mp.mpf(a), mp.mpf(b)))
                out.write(struct.pack('<4d', a, b, hi, lo))
        print(name, len(ps))


if __name__ == '__main__':
    main()
