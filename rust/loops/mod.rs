//! The loop machinery of `map`, `reduce` and `scan`: programs evaluated a
//! tile at a time over columns, casts between dtypes, moving columns to and
//! from memory, padded loads, and the loops themselves.

pub mod arith;
pub mod cast;
pub mod column;
pub mod map;
pub mod memio;
pub mod ops;
pub mod pad;
pub mod prog;
pub mod reduce_loop;
