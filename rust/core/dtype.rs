//! The element types the contract names, their codes on the OCaml boundary,
//! their widths and their families.
//!
//! The code of each dtype is its position in [`Dtype::ALL`]; `Nx_array.Dtype`
//! on the OCaml side numbers them the same way.

/// An element type.
///
/// Sub-byte dtypes (`Bit`, `Int4`, `Uint4`, `Float4E2m1fn`) are packed, the
/// element of lowest index in the lowest bits of its byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Dtype {
    Bool,
    Bit,
    Int4,
    Uint4,
    Int8,
    Int16,
    Int32,
    Int64,
    Uint8,
    Uint16,
    Uint32,
    Uint64,
    Float4E2m1fn,
    Float8E4m3fn,
    Float8E5m2,
    Float16,
    Bfloat16,
    Float32,
    Float64,
    Complex64,
    Complex128,
}

/// What a dtype's elements are, which decides the operations that take it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// `Bool` and `Bit`: truth values.
    Logical,
    /// Two's complement integers.
    Signed,
    /// Unsigned integers.
    Unsigned,
    /// Real binary floating point, narrow ones included.
    Float,
    /// Complex numbers of two float parts.
    Complex,
}

impl Dtype {
    /// Every dtype, in code order.
    pub const ALL: [Dtype; 21] = [
        Dtype::Bool,
        Dtype::Bit,
        Dtype::Int4,
        Dtype::Uint4,
        Dtype::Int8,
        Dtype::Int16,
        Dtype::Int32,
        Dtype::Int64,
        Dtype::Uint8,
        Dtype::Uint16,
        Dtype::Uint32,
        Dtype::Uint64,
        Dtype::Float4E2m1fn,
        Dtype::Float8E4m3fn,
        Dtype::Float8E5m2,
        Dtype::Float16,
        Dtype::Bfloat16,
        Dtype::Float32,
        Dtype::Float64,
        Dtype::Complex64,
        Dtype::Complex128,
    ];

    /// The dtype of a boundary code, or `None` for a code no dtype has.
    pub fn of_code(code: i64) -> Option<Dtype> {
        usize::try_from(code).ok().and_then(|i| Dtype::ALL.get(i).copied())
    }

    /// The dtype's boundary code.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The dtype's name as the OCaml side and messages spell it.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Bool => "bool",
            Dtype::Bit => "bit",
            Dtype::Int4 => "int4",
            Dtype::Uint4 => "uint4",
            Dtype::Int8 => "int8",
            Dtype::Int16 => "int16",
            Dtype::Int32 => "int32",
            Dtype::Int64 => "int64",
            Dtype::Uint8 => "uint8",
            Dtype::Uint16 => "uint16",
            Dtype::Uint32 => "uint32",
            Dtype::Uint64 => "uint64",
            Dtype::Float4E2m1fn => "float4_e2m1fn",
            Dtype::Float8E4m3fn => "float8_e4m3fn",
            Dtype::Float8E5m2 => "float8_e5m2",
            Dtype::Float16 => "float16",
            Dtype::Bfloat16 => "bfloat16",
            Dtype::Float32 => "float32",
            Dtype::Float64 => "float64",
            Dtype::Complex64 => "complex64",
            Dtype::Complex128 => "complex128",
        }
    }

    /// Bits one element takes in memory.
    pub fn bits(self) -> usize {
        match self {
            Dtype::Bit => 1,
            Dtype::Int4 | Dtype::Uint4 | Dtype::Float4E2m1fn => 4,
            Dtype::Bool | Dtype::Int8 | Dtype::Uint8 | Dtype::Float8E4m3fn | Dtype::Float8E5m2 => 8,
            Dtype::Int16 | Dtype::Uint16 | Dtype::Float16 | Dtype::Bfloat16 => 16,
            Dtype::Int32 | Dtype::Uint32 | Dtype::Float32 => 32,
            Dtype::Int64 | Dtype::Uint64 | Dtype::Float64 | Dtype::Complex64 => 64,
            Dtype::Complex128 => 128,
        }
    }

    /// Whether elements share bytes (fewer than 8 bits each).
    pub fn is_sub_byte(self) -> bool {
        self.bits() < 8
    }

    /// Bytes one element takes, for dtypes of whole bytes.
    pub fn bytes(self) -> usize {
        debug_assert!(!self.is_sub_byte());
        self.bits() / 8
    }

    /// The dtype's family.
    pub fn family(self) -> Family {
        match self {
            Dtype::Bool | Dtype::Bit => Family::Logical,
            Dtype::Int4 | Dtype::Int8 | Dtype::Int16 | Dtype::Int32 | Dtype::Int64 => Family::Signed,
            Dtype::Uint4 | Dtype::Uint8 | Dtype::Uint16 | Dtype::Uint32 | Dtype::Uint64 => {
                Family::Unsigned
            }
            Dtype::Float4E2m1fn
            | Dtype::Float8E4m3fn
            | Dtype::Float8E5m2
            | Dtype::Float16
            | Dtype::Bfloat16
            | Dtype::Float32
            | Dtype::Float64 => Family::Float,
            Dtype::Complex64 | Dtype::Complex128 => Family::Complex,
        }
    }

    /// Whether the dtype is an integer, signed or not.
    pub fn is_integer(self) -> bool {
        matches!(self.family(), Family::Signed | Family::Unsigned)
    }

    /// Whether the dtype is a real float.
    pub fn is_float(self) -> bool {
        self.family() == Family::Float
    }

    /// Whether the dtype is complex.
    pub fn is_complex(self) -> bool {
        self.family() == Family::Complex
    }

    /// Whether the dtype is a float narrower than float32, which computes in
    /// float32 and rounds once into its dtype.
    pub fn is_narrow_float(self) -> bool {
        self.is_float() && self.bits() < 32
    }

    /// The real dtype of a complex dtype's parts; a real dtype itself.
    pub fn part(self) -> Dtype {
        match self {
            Dtype::Complex64 => Dtype::Float32,
            Dtype::Complex128 => Dtype::Float64,
            d => d,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_reject_others() {
        for (i, d) in Dtype::ALL.iter().enumerate() {
            assert_eq!(d.code() as usize, i);
            assert_eq!(Dtype::of_code(i as i64), Some(*d));
        }
        assert_eq!(Dtype::of_code(21), None);
        assert_eq!(Dtype::of_code(-1), None);
        assert_eq!(Dtype::of_code(i64::MAX), None);
    }

    #[test]
    fn widths_and_families() {
        assert_eq!(Dtype::Bit.bits(), 1);
        assert!(Dtype::Uint4.is_sub_byte() && !Dtype::Bool.is_sub_byte());
        assert_eq!(Dtype::Complex64.part(), Dtype::Float32);
        assert!(Dtype::Bfloat16.is_narrow_float() && !Dtype::Float32.is_narrow_float());
        assert!(Dtype::Uint64.is_integer() && !Dtype::Bit.is_integer());
        // `Memory::extent` divides by a width as a shift.
        for d in Dtype::ALL {
            assert!(d.bits().is_power_of_two(), "{} is {} bits wide", d.name(), d.bits());
        }
    }
}
