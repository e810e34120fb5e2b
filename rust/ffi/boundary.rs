//! What every kernel's entry from OCaml shares: the memory of the buffers
//! OCaml passes, rooted for the call; the door and the domain lock around
//! the work; the answer as OCaml reads it.

use crate::core::answer::Answer;
use crate::core::call::Call;
use crate::core::door;
use crate::core::layout::Memory;
use ocaml_interop::{BoxRoot, OCaml, OCamlBytes, OCamlInt, OCamlRuntime, ToOCaml};
use ocaml_sys::bigarray::Bigarray;

extern "C" {
    fn caml_enter_blocking_section_no_pending();
    fn caml_leave_blocking_section();
}

/// Work, in bytes of a plain copy, past which a call releases the domain
/// lock: about one unloaded core's copy of 1 MiB.
pub const RELEASE_BYTES: usize = 1 << 20;

/// Runs `f` with the domain lock released. Pending signals are not
/// processed on the way out, so no OCaml code (and no exception) runs here.
fn released<T>(_cr: &mut OCamlRuntime, f: impl FnOnce() -> T) -> T {
    struct Relock;
    impl Drop for Relock {
        fn drop(&mut self) {
            // SAFETY: paired with the enter below, on the same thread.
            unsafe { caml_leave_blocking_section() }
        }
    }
    // SAFETY: the caller holds the domain lock (it holds `&mut
    // OCamlRuntime`) and touches no OCaml value until `Relock` drops.
    unsafe { caml_enter_blocking_section_no_pending() };
    let _relock = Relock;
    f()
}

const BA_KIND_MASK: isize = 0xFF;

/// Bytes one element of a bigarray kind takes.
fn kind_bytes(kind: isize) -> Option<usize> {
    Some(match kind {
        0x00 | 0x06 => 4,                      // float32, int32
        0x01 | 0x07 | 0x08 | 0x09 | 0x0a => 8, // float64, int64, caml int, nativeint, complex32
        0x02 | 0x03 | 0x0c => 1,               // int8, uint8, char
        0x04 | 0x05 | 0x0d => 2,               // int16, uint16, float16
        0x0b => 16,                            // complex64
        _ => return None,
    })
}

/// The data pointer and byte length of a bigarray value.
///
/// # Safety
/// `v` must be a live bigarray value and the caller must hold the domain
/// lock.
pub(crate) unsafe fn bigarray_memory(v: ocaml_sys::Value) -> Result<Memory, String> {
    // SAFETY: a bigarray is a custom block whose data follows its ops word.
    let ba = (v as *const ocaml_sys::Value).add(1) as *const Bigarray;
    let kind = (*ba).flags & BA_KIND_MASK;
    let elt = kind_bytes(kind).ok_or_else(|| format!("a bigarray of unknown kind {kind}"))?;
    let dims = std::slice::from_raw_parts((*ba).dim.as_ptr(), (*ba).num_dims as usize);
    let mut bytes = elt;
    for &d in dims {
        bytes = bytes.checked_mul(d as usize).ok_or("a bigarray larger than memory")?;
    }
    Ok(Memory { base: (*ba).data as *mut u8, bytes })
}

/// The memory of each buffer record in an OCaml array of them.
///
/// # Safety
/// `arr` must be an OCaml array of `Nx_array.Buffer.t` records (field 0 a
/// bigarray) and the caller must hold the domain lock.
unsafe fn buffer_memories(arr: ocaml_sys::Value) -> Result<Vec<Memory>, String> {
    let n = ocaml_sys::wosize_val(arr);
    (0..n)
        .map(|i| {
            let rec = *ocaml_sys::field(arr, i);
            let ba = *ocaml_sys::field(rec, 0);
            if ocaml_sys::tag_val(ba) != ocaml_sys::CUSTOM {
                return Err(format!("buffer {i} is not a bigarray"));
            }
            bigarray_memory(ba)
        })
        .collect()
}

fn answer_to_ocaml<'a>(cr: &'a mut OCamlRuntime, a: Answer) -> OCaml<'a, (OCamlInt, String)> {
    let (code, msg) = match a {
        Answer::Done => (0i64, String::new()),
        Answer::Declined(m) => (1, m),
        Answer::Refused(m) => (2, m),
    };
    (code, msg).to_ocaml(cr)
}

/// Runs a planned call through the door: its claims taken at once (waiting,
/// with the domain lock released, while another call holds a conflicting
/// one), its work run with the lock released where it is long.
pub fn execute<C: Call>(cr: &mut OCamlRuntime, kernel: &str, planned: Result<C, String>) -> Answer {
    let plan = match planned {
        Err(e) => return Answer::Refused(format!("nx.cpu {kernel}: {e}")),
        Ok(plan) => plan,
    };
    if let Some(why) = plan.declined() {
        return Answer::Declined(why);
    }
    let claims = plan.claims();
    let big = plan.work() > RELEASE_BYTES;
    let run = |plan: C, pass: door::Pass| {
        let r = plan.run();
        drop(pass);
        Answer::of(format_args!("nx.cpu {kernel}"), r)
    };
    match door::try_enter(&claims) {
        Some(pass) if !big => run(plan, pass),
        Some(pass) => released(cr, || run(plan, pass)),
        None => released(cr, || {
            let pass = door::enter(&claims);
            run(plan, pass)
        }),
    }
}

/// A kernel's entry from OCaml: with `buffers` (an OCaml array of
/// `Nx_array.Buffer.t` records) rooted for the call, plans it by `plan` from
/// their memory, runs it through the door ([`execute`]) and answers (0, "") for
/// Done, (1, why) for Declined, (2, why) for a refusal naming `kernel`.
pub fn call<'a, C: Call>(
    cr: &'a mut OCamlRuntime,
    kernel: &str,
    rooted: BoxRoot<OCamlBytes>,
    plan: impl FnOnce(&[Memory]) -> Result<C, String>,
) -> OCaml<'a, (OCamlInt, String)> {
    // SAFETY: OCaml's types of every external that reaches here make
    // `buffers` an array of buffer records; the lock is held.
    let planned = unsafe { buffer_memories(rooted.get(cr).raw()) }.and_then(|mems| plan(&mems));
    let answer = execute(cr, kernel, planned);
    drop(rooted);
    answer_to_ocaml(cr, answer)
}
