//! `Nx_cpu.c2c`'s, `r2c`'s and `c2r`'s entry.

use super::boundary::{call, OCamlAnswer};
use crate::ffi::wire::{views, words, Reader};
use crate::fft::{self, Direction, Kind};
use ocaml_interop::{BoxRoot, OCaml, OCamlBytes, OCamlRuntime};

/// The transforms: the call's words (the kind, 0 a Forward c2c, 1 an
/// Inverse c2c, 2 r2c, 3 c2r; the axes' count and axes), the views' words
/// (dst, then x) and the buffers. Answers as `Nx_cpu.map`'s entry does.
#[ocaml_interop::export]
pub fn nx_cpu_fft(
    cr: &mut OCamlRuntime,
    call_words: OCaml<OCamlBytes>,
    view_words: OCaml<OCamlBytes>,
    buffers: OCaml<OCamlBytes>,
) -> OCaml<OCamlAnswer> {
    let (call_words, view_words) = (words(call_words.as_bytes()), words(view_words.as_bytes()));
    let kind = match call_words.as_ref().ok().and_then(|w| w.first()) {
        Some(0) => Ok(Kind::C2c(Direction::Forward)),
        Some(1) => Ok(Kind::C2c(Direction::Inverse)),
        Some(2) => Ok(Kind::R2c),
        Some(3) => Ok(Kind::C2r),
        _ => Err("an unknown transform".to_string()),
    };
    let name = match kind {
        Ok(Kind::R2c) => "r2c",
        Ok(Kind::C2r) => "c2r",
        _ => "c2c",
    };
    call(cr, name, BoxRoot::new(buffers), |mems| {
        let kind = kind?;
        let call_words = call_words?;
        let mut r = Reader::new(&call_words, "transform");
        r.word()?;
        let n = r.count("axis count")?.min(call_words.len());
        let axes = r.counts(n, "axis")?;
        r.finish()?;
        let mut all = views(&view_words?, mems)?;
        if all.len() != 2 {
            return Err(format!("{} arrays for a transform's dst and x", all.len()));
        }
        let x = all.pop().expect("two views");
        let dst = all.pop().expect("two views");
        fft::plan(kind, &axes, dst, x)
    })
}
