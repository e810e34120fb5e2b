//! The matrix routines' entry: `Nx_cpu.cholesky`, `lu`, `solve_triangular`
//! and `qr`.

use super::boundary::{call, OCamlAnswer};
use crate::ffi::wire::{views, words, Reader};
use crate::linalg::{self, Routine, Triangle};
use ocaml_interop::{BoxRoot, OCaml, OCamlBytes, OCamlInt, OCamlRuntime};

/// Decodes a routine from its words: a code (0 cholesky, 1 lu, 2
/// solve_triangular, 3 qr), the triangle (0 Lower, 1 Upper), adjoint and
/// unit_diagonal (0 or 1 each; read by the routines that take them).
fn routine(w: &[i64]) -> Result<Routine, String> {
    let mut r = Reader::new(w, "matrix routine");
    let code = r.word()?;
    let triangle = match r.word()? {
        0 => Triangle::Lower,
        1 => Triangle::Upper,
        t => return Err(format!("no triangle of code {t}")),
    };
    let (adjoint, unit_diagonal) = (r.word()? == 1, r.word()? == 1);
    r.finish()?;
    Ok(match code {
        0 => Routine::Cholesky(triangle),
        1 => Routine::Lu,
        2 => Routine::SolveTriangular { triangle, adjoint, unit_diagonal },
        3 => Routine::Qr,
        c => return Err(format!("no matrix routine of code {c}")),
    })
}

/// A matrix routine: its words ([`routine`]), the views' words (the
/// destinations, then the operands, in the order `linalg::Routine` lists
/// them), the number of destinations and the buffers. Answers `Nx_array.answer`.
#[ocaml_interop::export]
pub fn nx_cpu_linalg(
    cr: &mut OCamlRuntime,
    call_words: OCaml<OCamlBytes>,
    view_words: OCaml<OCamlBytes>,
    n_dsts: OCaml<OCamlInt>,
    buffers: OCaml<OCamlBytes>,
) -> OCaml<OCamlAnswer> {
    let n_dsts: i64 = n_dsts.to_rust();
    let (call_words, view_words) = (words(call_words.as_bytes()), words(view_words.as_bytes()));
    let r = call_words.as_ref().ok().and_then(|w| routine(w).ok());
    call(cr, r.map_or("linalg", Routine::name), BoxRoot::new(buffers), |mems| {
        let r = routine(&call_words?)?;
        let all = views(&view_words?, mems)?;
        let n_dsts = usize::try_from(n_dsts).ok().filter(|&n| n <= all.len()).ok_or("a destination count past the views")?;
        let (dsts, operands) = (all[..n_dsts].to_vec(), all[n_dsts..].to_vec());
        linalg::plan(r, dsts, operands)
    })
}
