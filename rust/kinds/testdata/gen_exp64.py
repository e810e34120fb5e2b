#!/usr/bin/env python3
"""The table and constants of the f64 exp kind (rust/kinds/exp.rs, `exp64`).

Run: python3 rust/kinds/testdata/gen_exp64.py [BITS DEGREE]   (default 4 7, as exp.rs holds)
Needs mpmath. Prints the Rust constants: N = 2^BITS, the reduction constants,
the shifter, the polynomial and the table; and the errors of each.

exp(x) = 2^k 2^(j/N) exp(r), x = (N k + j) ln2/N + r. The reduction gives
u = r - c with c = SHIFT * LO (the shifter's product with ln2/N's low part,
for free), and tmp = u q(u) + v, where v = TAIL + code 2^(E-52) is decoded from
the top 12 bits of the table entry (its code) ORed into EXP64_TAIL_BITS: the
constant part is exp(c) - 1 rounded (its 12 low bits B), the rest the relative
tail d of 2^(j/N) = h (1 + d) in units of its quantum 2^(E-52), h the head of
2^(j/N) (the entry's low 52 bits). Then 2^(j/N) exp(r) = h (1 + tmp) to about
2^-62, with u q(u) ~ exp(u + c) - 1 - (exp(c) - 1), q of DEGREE - 1.
The errors printed are absolute, in 1 + tmp.
"""
import sys, struct
from mpmath import mp, mpf, chebyfit, exp, log

mp.prec = 256
BITS = int(sys.argv[1]) if len(sys.argv) > 1 else 4
DEG = int(sys.argv[2]) if len(sys.argv) > 2 else 7
N = 1 << BITS
ln2 = log(2)


def bits(v):
    return struct.unpack('<Q', struct.pack('<d', v))[0]


INV = float(N / ln2)
HI = float(ln2 / N)
LO = float(ln2 / N - mpf(HI))
assert LO > 0
# The shifter SHIFT = 2^52 + 1023 N + m 2^(12 + BITS), in [2^52, 2^53), the
# constant c = SHIFT LO about 2^E ({4: 2^-7, 5: 2^-8, 6: 2^-9, 7: 2^-10, 8: 2^-11}), so that
# exp(c) - 1 lies in [2^E, 2^(E+1)) and the tail's quantum is 2^(E-52); m
# the nearest to that whose exp(c) - 1 has its 12 low bits (B) in
# [600, 3490], so that B plus each code's tail fits in them.
E = {4: -7, 5: -8, 6: -9, 7: -10, 8: -11}[BITS]
target = log(1 + mpf(2)**E * mpf('1.5'))
step = 2**(12 + BITS)
m0 = int(mp.nint((target / LO - 2**52 - 1023 * N) / step))
for dm in range(1000):
    m = m0 + (dm + 1) // 2 * (1 if dm % 2 else -1)
    SHIFT = 2**52 + 1023 * N + m * step
    c = mpf(SHIFT) * mpf(LO)
    tz = exp(c) - 1
    B = bits(float(tz)) & 0xfff
    if 600 <= B <= 3490:
        break
assert 2**52 <= SHIFT < 2**53 and float(SHIFT) == SHIFT
assert mpf(2)**E <= tz < mpf(2)**(E + 1)
tail_bits = bits(float(tz)) & ~0xfff
tz_err = mpf(float(tz)) - tz
a = ln2 / (2 * N) * mpf('1.01')
lo, hi = -a - c, a - c
f = lambda u: (exp(u + c) - 1 - tz) / u if abs(u) > mpf('1e-40') else exp(c)
poly = chebyfit(f, [lo, hi], DEG)
q = [float(v) for v in reversed(poly)]
worst = mpf(0)
for i in range(4001):
    u = lo + (hi - lo) * i / 4000
    p = mpf(0)
    for ci in reversed(q):
        p = p * u + mpf(ci)
    worst = max(worst, abs(u * p - (exp(u + c) - 1 - tz)))
ents, worst_code = [], mpf(0)
for j in range(N):
    v = mp.power(2, mpf(j) / N)
    h = float(v)
    d = (v - mpf(h)) / mpf(h)
    code = int(mp.nint(d / mpf(2)**(E - 52))) + B
    worst_code = max(worst_code, abs(d - (code - B) * mpf(2)**(E - 52)))
    assert 0 <= code < 4096
    ents.append((code << 52) | (bits(h) & ((1 << 52) - 1)))
print(f"// gen_exp64.py {BITS} {DEG}: polynomial error 2^{float(log(worst, 2)):.1f}, "
      f"tails to 2^{float(log(worst_code, 2)):.1f}, exp(c) - 1 to 2^{float(log(abs(tz_err), 2)):.1f}")
print(f"const EXP64_BITS: u32 = {BITS};")
print(f"const EXP64_INV: f64 = {INV!r};")
print(f"const EXP64_STEP_HI: f64 = {HI!r};")
print(f"const EXP64_STEP_LO: f64 = {LO!r};")
print(f"const EXP64_SHIFT: f64 = {float(SHIFT)!r};")
print(f"const EXP64_TAIL_BITS: u64 = 0x{tail_bits:x};")
print("const EXP64_Q: &[f64] = &[")
for v in q:
    print(f"    {v!r},")
print("];")
print("#[rustfmt::skip]")
print(f"static EXP64_TABLE: [u64; {N}] = [")
for i in range(0, N, 4):
    print("    " + " ".join("0x%016x," % e for e in ents[i:i + 4]))
print("];")
