//! Programs: the typed DAG of nodes that `map` (and later `reduce` and
//! `scan`) evaluates at every index of a loop.
//!
//! A program has operands (one dtype each, read by `Load` nodes), nodes in
//! topological order (each reads earlier nodes only) and outputs (node
//! indices). Every node's dtype is inferred here, and a program that breaks a
//! dtype rule is refused with a message naming the node.
//!
//! On the boundary a program is a sequence of 64-bit words:
//! `n_operands, dtype codes.., n_nodes, nodes.., n_outputs, node indices..`,
//! each node five words `tag, a, b, c, d` (see [`Prog::decode`]).

use crate::core::dtype::{Dtype, Family};

/// One-operand kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unary {
    /// Negation; integers wrap (the most negative value is its own negation).
    Neg,
    /// Magnitude; integers wrap at the most negative value; a complex
    /// number's modulus is of its parts' dtype.
    Abs,
    /// -1, 0 or 1 by the sign (NaN for NaN, signed zero for zero).
    Sign,
    /// x * x.
    Square,
    /// IEEE square root, correctly rounded.
    Sqrt,
    /// 1 / x, correctly rounded.
    Recip,
    /// Rounding toward zero.
    Trunc,
    /// Rounding up.
    Ceil,
    /// Rounding down.
    Floor,
    /// Rounding to nearest, halves away from zero.
    Round,
    /// Whether x is a NaN (a complex number: either part), as a bool.
    IsNan,
    /// Whether x is infinite (a complex number: either part), as a bool.
    IsInf,
    /// Whether x is finite (a complex number: both parts), as a bool.
    IsFinite,
    /// Logical negation of a bool or bit.
    Not,
    /// Bitwise complement of an integer; logical negation of a bool or bit.
    BitNot,
    /// Complex conjugate; a real number itself.
    Conj,
    /// Real part, of the parts' dtype; a real number itself.
    Real,
    /// Imaginary part, of the parts' dtype; +0 for a real number.
    Imag,
    /// e^x (`crate::kinds`, as each kind below: floats, and complex numbers
    /// for Exp, Log, the trigonometric and hyperbolic kinds and their
    /// inverses, Sqrt, Recip and Pow).
    Exp,
    /// 2^x, exact at integers whose power the dtype holds.
    Exp2,
    /// e^x - 1.
    Expm1,
    /// Natural logarithm.
    Log,
    /// Base-2 logarithm, exact at powers of two.
    Log2,
    /// ln(1 + x).
    Log1p,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    /// The error function.
    Erf,
    /// 1 / sqrt(x).
    Rsqrt,
}

/// Two-operand kinds, both operands of one dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binary {
    /// Sum; integers wrap; logical or on bool and bit.
    Add,
    /// Difference; integers wrap.
    Sub,
    /// Product; integers wrap; logical and on bool and bit.
    Mul,
    /// True division on floats and complex numbers; integer division
    /// truncates toward zero, gives 0 for a zero divisor and wraps for the
    /// most negative value over -1.
    Div,
    /// The greater, a NaN where either is.
    Maximum,
    /// The lesser, a NaN where either is.
    Minimum,
    /// x = y, as a bool.
    Eq,
    /// x <> y, as a bool.
    Ne,
    /// x < y, as a bool (complex numbers: by real parts, then imaginary).
    Lt,
    /// x <= y, as a bool.
    Le,
    /// x > y, as a bool.
    Gt,
    /// x >= y, as a bool.
    Ge,
    /// Logical and of bools or bits.
    And,
    /// Logical or of bools or bits.
    Or,
    /// Logical exclusive or of bools or bits.
    Xor,
    /// Bitwise and of integers (logical on bool and bit).
    BitAnd,
    /// Bitwise or of integers (logical on bool and bit).
    BitOr,
    /// Bitwise exclusive or of integers (logical on bool and bit).
    BitXor,
    /// x shifted left by y bits; 0 where y is negative or at least the width.
    Shl,
    /// x shifted right by y bits, arithmetic on signed dtypes; where y is
    /// negative or at least the width, 0, or -1 for a negative x.
    Shr,
    /// x^y (floats, C99's special cases; complex numbers, numpy's).
    Pow,
    /// The angle of (x, y) read as (y, x): atan2(x, y), C99's quadrants.
    Atan2,
    /// sqrt(x^2 + y^2) without overflow or underflow on the way.
    Hypot,
    /// The remainder of x / y with the sign of y, as Python's: an integer
    /// one of a zero divisor is 0; a float one is x - y floor(x / y)
    /// computed exactly from the truncated remainder, +-0 taking y's sign.
    Mod,
}

impl Unary {
    /// Kinds in boundary code order.
    pub const ALL: [Unary; 38] = [
        Unary::Neg,
        Unary::Abs,
        Unary::Sign,
        Unary::Square,
        Unary::Sqrt,
        Unary::Recip,
        Unary::Trunc,
        Unary::Ceil,
        Unary::Floor,
        Unary::Round,
        Unary::IsNan,
        Unary::IsInf,
        Unary::IsFinite,
        Unary::Not,
        Unary::BitNot,
        Unary::Conj,
        Unary::Real,
        Unary::Imag,
        Unary::Exp,
        Unary::Exp2,
        Unary::Expm1,
        Unary::Log,
        Unary::Log2,
        Unary::Log1p,
        Unary::Sin,
        Unary::Cos,
        Unary::Tan,
        Unary::Asin,
        Unary::Acos,
        Unary::Atan,
        Unary::Sinh,
        Unary::Cosh,
        Unary::Tanh,
        Unary::Asinh,
        Unary::Acosh,
        Unary::Atanh,
        Unary::Erf,
        Unary::Rsqrt,
    ];

    /// Whether the kind is a transcendental function (Exp through Erf):
    /// tens of operations an element, where the others take a few.
    pub fn is_transcendental(self) -> bool {
        use Unary::*;
        matches!(
            self,
            Exp | Exp2 | Expm1 | Log | Log2 | Log1p | Sin | Cos | Tan | Asin | Acos | Atan | Sinh | Cosh | Tanh | Asinh | Acosh | Atanh | Erf
        )
    }
}

impl Binary {
    /// Kinds in boundary code order.
    pub const ALL: [Binary; 24] = [
        Binary::Add,
        Binary::Sub,
        Binary::Mul,
        Binary::Div,
        Binary::Maximum,
        Binary::Minimum,
        Binary::Eq,
        Binary::Ne,
        Binary::Lt,
        Binary::Le,
        Binary::Gt,
        Binary::Ge,
        Binary::And,
        Binary::Or,
        Binary::Xor,
        Binary::BitAnd,
        Binary::BitOr,
        Binary::BitXor,
        Binary::Shl,
        Binary::Shr,
        Binary::Pow,
        Binary::Atan2,
        Binary::Hypot,
        Binary::Mod,
    ];

    /// Whether the kind is a transcendental function (Pow, Atan2), as
    /// [`Unary::is_transcendental`].
    pub fn is_transcendental(self) -> bool {
        matches!(self, Binary::Pow | Binary::Atan2)
    }

    /// Whether the kind compares and answers a bool.
    pub fn is_comparison(self) -> bool {
        matches!(self, Binary::Eq | Binary::Ne | Binary::Lt | Binary::Le | Binary::Gt | Binary::Ge)
    }
}

/// A constant: its dtype and its bits as stored in memory, the low element
/// bits of `lo` (a complex128 constant's imaginary part in `hi`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Constant {
    pub dtype: Dtype,
    pub lo: u64,
    pub hi: u64,
}

/// A node of a program.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Node {
    /// Operand i, read through the loop's load i.
    Load(usize),
    /// The same value at every index.
    Const(Constant),
    /// The index along an axis of the loop, as an int64.
    Coord(usize),
    /// A one-operand kind of an earlier node.
    Unary(Unary, usize),
    /// A two-operand kind of two earlier nodes.
    Binary(Binary, usize, usize),
    /// Where the first (a bool) is true the second, else the third.
    Where(usize, usize, usize),
    /// An earlier node cast into a dtype (see `crate::loops::cast`).
    Cast(Dtype, usize),
}

impl Node {
    /// Whether the node reads node `j`'s values.
    pub fn reads(self, j: usize) -> bool {
        match self {
            Node::Load(_) | Node::Const(_) | Node::Coord(_) => false,
            Node::Unary(_, x) | Node::Cast(_, x) => x == j,
            Node::Binary(_, x, y) => x == j || y == j,
            Node::Where(c, x, y) => c == j || x == j || y == j,
        }
    }
}

/// A checked program with every node's dtype.
#[derive(Clone, Debug, PartialEq)]
pub struct Prog {
    pub operands: Vec<Dtype>,
    pub nodes: Vec<Node>,
    pub dtypes: Vec<Dtype>,
    pub outputs: Vec<usize>,
}

const NODE_WORDS: usize = 5;

fn index(w: i64, what: &str) -> Result<usize, String> {
    usize::try_from(w).map_err(|_| format!("{what} {w} is negative"))
}

fn dtype(w: i64) -> Result<Dtype, String> {
    Dtype::of_code(w).ok_or_else(|| format!("no dtype has code {w}"))
}

impl Prog {
    /// Decodes and checks a program from its boundary words. Node tags:
    /// 0 `Load i`, 1 `Const dtype lo hi`, 2 `Coord axis`, 3 `Unary kind x`,
    /// 4 `Binary kind x y`, 5 `Where c x y`, 6 `Cast dtype x`; unused words
    /// are 0.
    pub fn decode(words: &[i64]) -> Result<Prog, String> {
        let mut at = 0usize;
        let mut next = |what: &str| -> Result<i64, String> {
            let w = *words.get(at).ok_or_else(|| format!("program ends before its {what}"))?;
            at += 1;
            Ok(w)
        };
        let n_operands = index(next("operand count")?, "operand count")?;
        let mut operands = Vec::new();
        for _ in 0..n_operands {
            operands.push(dtype(next("operand dtype")?)?);
        }
        let n_nodes = index(next("node count")?, "node count")?;
        let mut nodes = Vec::new();
        for _ in 0..n_nodes {
            let mut w = [0i64; NODE_WORDS];
            for x in w.iter_mut() {
                *x = next("nodes")?;
            }
            let kind = |table_len: usize, what: &str| -> Result<usize, String> {
                index(w[1], what).and_then(|k| {
                    if k < table_len { Ok(k) } else { Err(format!("no {what} has code {k}")) }
                })
            };
            let node = match w[0] {
                0 => Node::Load(index(w[1], "operand")?),
                1 => Node::Const(Constant { dtype: dtype(w[1])?, lo: w[2] as u64, hi: w[3] as u64 }),
                2 => Node::Coord(index(w[1], "axis")?),
                3 => Node::Unary(Unary::ALL[kind(Unary::ALL.len(), "unary kind")?], index(w[2], "node")?),
                4 => Node::Binary(
                    Binary::ALL[kind(Binary::ALL.len(), "binary kind")?],
                    index(w[2], "node")?,
                    index(w[3], "node")?,
                ),
                5 => Node::Where(index(w[1], "node")?, index(w[2], "node")?, index(w[3], "node")?),
                6 => Node::Cast(dtype(w[1])?, index(w[2], "node")?),
                t => return Err(format!("no node has tag {t}")),
            };
            nodes.push(node);
        }
        let n_outputs = index(next("output count")?, "output count")?;
        let mut outputs = Vec::new();
        for _ in 0..n_outputs {
            outputs.push(index(next("outputs")?, "output")?);
        }
        if at != words.len() {
            return Err(format!("program has {} words past its end", words.len() - at));
        }
        Prog::new(operands, nodes, outputs)
    }

    /// Checks a program and infers its nodes' dtypes.
    pub fn new(operands: Vec<Dtype>, nodes: Vec<Node>, outputs: Vec<usize>) -> Result<Prog, String> {
        let mut dtypes: Vec<Dtype> = Vec::with_capacity(nodes.len());
        for (i, node) in nodes.iter().enumerate() {
            let arg = |j: usize| -> Result<Dtype, String> {
                if j < i {
                    Ok(dtypes[j])
                } else {
                    Err(format!("node {i} reads node {j}, which is not before it"))
                }
            };
            let d = match *node {
                Node::Load(k) => *operands
                    .get(k)
                    .ok_or_else(|| format!("node {i} loads operand {k} of {}", operands.len()))?,
                Node::Const(c) => c.dtype,
                Node::Coord(_) => Dtype::Int64,
                Node::Unary(k, x) => unary_dtype(k, arg(x)?).map_err(|e| format!("node {i}: {e}"))?,
                Node::Binary(k, x, y) => {
                    binary_dtype(k, arg(x)?, arg(y)?).map_err(|e| format!("node {i}: {e}"))?
                }
                Node::Where(c, x, y) => {
                    let (dc, dx, dy) = (arg(c)?, arg(x)?, arg(y)?);
                    if dc != Dtype::Bool {
                        return Err(format!("node {i}: where's condition is {}, not bool", dc.name()));
                    }
                    if dx != dy {
                        return Err(format!("node {i}: where's branches are {} and {}", dx.name(), dy.name()));
                    }
                    dx
                }
                Node::Cast(d, x) => {
                    arg(x)?;
                    d
                }
            };
            dtypes.push(d);
        }
        for &o in &outputs {
            if o >= nodes.len() {
                return Err(format!("output node {o} of a program of {} nodes", nodes.len()));
            }
        }
        Ok(Prog { operands, nodes, dtypes, outputs })
    }

    /// The dtype of output k.
    pub fn output_dtype(&self, k: usize) -> Dtype {
        self.dtypes[self.outputs[k]]
    }

    /// Whether a transcendental kind takes a load's values as an argument.
    pub fn loads_into_transcendental(&self) -> bool {
        let load = |x: usize| matches!(self.nodes[x], Node::Load(_));
        self.nodes.iter().any(|n| match *n {
            Node::Unary(k, x) => k.is_transcendental() && load(x),
            Node::Binary(k, x, y) => k.is_transcendental() && (load(x) || load(y)),
            _ => false,
        })
    }

    /// The greatest axis a Coord node reads, if any.
    pub fn max_coord_axis(&self) -> Option<usize> {
        self.nodes.iter().filter_map(|n| if let Node::Coord(a) = n { Some(*a) } else { None }).max()
    }
}

fn unary_dtype(k: Unary, d: Dtype) -> Result<Dtype, String> {
    let f = d.family();
    let refuse = || Err(format!("{k:?} does not take {}", d.name()));
    match k {
        Unary::Neg | Unary::Sign | Unary::Square => {
            if f == Family::Logical { refuse() } else { Ok(d) }
        }
        Unary::Abs => match f {
            Family::Logical => refuse(),
            _ => Ok(d.part()),
        },
        Unary::Sqrt | Unary::Recip => {
            if matches!(f, Family::Float | Family::Complex) { Ok(d) } else { refuse() }
        }
        Unary::Trunc | Unary::Ceil | Unary::Floor | Unary::Round => {
            if f == Family::Float { Ok(d) } else { refuse() }
        }
        Unary::Exp
        | Unary::Log
        | Unary::Sin
        | Unary::Cos
        | Unary::Tan
        | Unary::Asin
        | Unary::Acos
        | Unary::Atan
        | Unary::Sinh
        | Unary::Cosh
        | Unary::Tanh
        | Unary::Asinh
        | Unary::Acosh
        | Unary::Atanh => {
            if matches!(f, Family::Float | Family::Complex) { Ok(d) } else { refuse() }
        }
        Unary::Exp2 | Unary::Expm1 | Unary::Log2 | Unary::Log1p | Unary::Erf | Unary::Rsqrt => {
            if f == Family::Float { Ok(d) } else { refuse() }
        }
        Unary::IsNan | Unary::IsInf | Unary::IsFinite => {
            if f == Family::Logical { refuse() } else { Ok(Dtype::Bool) }
        }
        Unary::Not => {
            if f == Family::Logical { Ok(d) } else { refuse() }
        }
        Unary::BitNot => {
            if matches!(f, Family::Logical | Family::Signed | Family::Unsigned) { Ok(d) } else { refuse() }
        }
        Unary::Conj => {
            if f == Family::Logical { refuse() } else { Ok(d) }
        }
        Unary::Real | Unary::Imag => {
            if f == Family::Logical { refuse() } else { Ok(d.part()) }
        }
    }
}

fn binary_dtype(k: Binary, x: Dtype, y: Dtype) -> Result<Dtype, String> {
    if x != y {
        return Err(format!("{k:?} of {} and {}: operands must share a dtype", x.name(), y.name()));
    }
    let f = x.family();
    let refuse = || Err(format!("{k:?} does not take {}", x.name()));
    match k {
        Binary::Add | Binary::Mul | Binary::Maximum | Binary::Minimum => Ok(x),
        Binary::Sub | Binary::Div => {
            if f == Family::Logical { refuse() } else { Ok(x) }
        }
        Binary::Pow => {
            if matches!(f, Family::Float | Family::Complex) { Ok(x) } else { refuse() }
        }
        Binary::Atan2 | Binary::Hypot => {
            if f == Family::Float { Ok(x) } else { refuse() }
        }
        Binary::Mod => {
            if matches!(f, Family::Float | Family::Signed | Family::Unsigned) { Ok(x) } else { refuse() }
        }
        _ if k.is_comparison() => Ok(Dtype::Bool),
        Binary::And | Binary::Or | Binary::Xor => {
            if f == Family::Logical { Ok(x) } else { refuse() }
        }
        Binary::BitAnd | Binary::BitOr | Binary::BitXor => {
            if matches!(f, Family::Logical | Family::Signed | Family::Unsigned) { Ok(x) } else { refuse() }
        }
        _ => {
            // Shl, Shr
            if matches!(f, Family::Signed | Family::Unsigned) { Ok(x) } else { refuse() }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_a_fused_program() {
        // (x + y) < z as bool, and x cast to float16
        let w = [
            3, 17, 17, 17, // operands
            6, //
            0, 0, 0, 0, 0, //
            0, 1, 0, 0, 0, //
            0, 2, 0, 0, 0, //
            4, 0, 0, 1, 0, //
            4, 8, 3, 2, 0, //
            6, 15, 0, 0, 0, //
            2, 4, 5,
        ];
        let p = Prog::decode(&w).unwrap();
        assert_eq!(p.dtypes[4], Dtype::Bool);
        assert_eq!(p.output_dtype(1), Dtype::Float16);
    }

    #[test]
    fn refuses_malformed_programs() {
        let bad: [&[i64]; 8] = [
            &[],
            &[1, 99, 0, 0],
            &[1, 17, 1, 0, 1, 0, 0, 0, 1, 0],       // loads operand 1 of 1
            &[1, 17, 1, 3, 0, 0, 0, 0, 1, 0],       // reads itself
            &[1, 17, 1, 9, 0, 0, 0, 0, 1, 0],       // bad tag
            &[1, 17, 1, 0, 0, 0, 0, 0, 1, 1],       // output past the nodes
            &[1, 17, 1, 0, 0, 0, 0, 0, 1, 0, 7],    // trailing word
            &[1, 17, 1, 3, 99, 0, 0, 0, 1, 0],      // bad unary kind
        ];
        for w in bad {
            assert!(Prog::decode(w).is_err(), "{w:?}");
        }
    }

    #[test]
    fn dtype_rules() {
        let ld = |d| Prog::new(vec![d, d], vec![Node::Load(0), Node::Load(1)], vec![]).unwrap();
        let _ = ld(Dtype::Int8);
        let mixed = Prog::new(
            vec![Dtype::Int8, Dtype::Int16],
            vec![Node::Load(0), Node::Load(1), Node::Binary(Binary::Add, 0, 1)],
            vec![2],
        );
        assert!(mixed.unwrap_err().contains("share a dtype"));
        let sub_bool = Prog::new(
            vec![Dtype::Bool, Dtype::Bool],
            vec![Node::Load(0), Node::Load(1), Node::Binary(Binary::Sub, 0, 1)],
            vec![2],
        );
        assert!(sub_bool.is_err());
        let abs_c = Prog::new(vec![Dtype::Complex64], vec![Node::Load(0), Node::Unary(Unary::Abs, 0)], vec![1]);
        assert_eq!(abs_c.unwrap().output_dtype(0), Dtype::Float32);
        let where_bad = Prog::new(
            vec![Dtype::Int8],
            vec![Node::Load(0), Node::Where(0, 0, 0)],
            vec![1],
        );
        assert!(where_bad.unwrap_err().contains("condition"));
    }
}
