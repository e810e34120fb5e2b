//! What every kernel's entry from OCaml shares: the memory of the buffers
//! OCaml passes, rooted for the call; the door and the domain lock around
//! the work; the answer as OCaml reads it.

use crate::core::answer::Answer;
use crate::core::call::Call;
use crate::core::door;
use crate::core::layout::Memory;
use ocaml_interop::{BoxRoot, OCaml, OCamlBytes, OCamlRuntime, ToOCaml};
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

/// The `struct caml_ba_array` of a bigarray value: a bigarray is a custom
/// block whose data follows its ops word. Reading or writing through the
/// pointer needs `v` live and the domain lock held.
pub(crate) fn bigarray_struct(v: ocaml_sys::Value) -> *mut Bigarray {
    (v as *mut ocaml_sys::Value).wrapping_add(1) as *mut Bigarray
}

/// The data pointer and byte length of a bigarray value.
///
/// # Safety
/// `v` must be a live bigarray value and the caller must hold the domain
/// lock.
// Inlined: returned through memory, its two words written apart and read
// back as one vector stalled the call of few buffers (~15 ns of a
// one-element map's ~210 on a Xeon).
#[inline(always)]
pub(crate) unsafe fn bigarray_memory(v: ocaml_sys::Value) -> Result<Memory, String> {
    // SAFETY (the reads below): `v` is a live bigarray, the lock held.
    let ba = bigarray_struct(v);
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
    (0..ocaml_sys::wosize_val(arr)).map(|i| buffer_memory(arr, i)).collect()
}

/// The memory of buffer `i` of an OCaml array of buffer records.
///
/// # Safety
/// As [`buffer_memories`], and `i` is below the array's length.
#[inline(always)]
unsafe fn buffer_memory(arr: ocaml_sys::Value, i: usize) -> Result<Memory, String> {
    let rec = *ocaml_sys::field(arr, i);
    let ba = *ocaml_sys::field(rec, 0);
    if ocaml_sys::tag_val(ba) != ocaml_sys::CUSTOM {
        return Err(format!("buffer {i} is not a bigarray"));
    }
    bigarray_memory(ba)
}

/// The buffers a call of few operands takes without allocating: the
/// kernels' `max_operands` (`Nx_array.max_operands`).
const FEW_BUFFERS: usize = 16;

/// `Nx_array.answer` as OCaml holds it: `Done` an immediate, so that a
/// call done allocates nothing on its way out; `Declined` and `Refused`
/// blocks of tags 0 and 1 holding their message.
pub enum OCamlAnswer {}

ocaml_interop::impl_to_ocaml_variant! {
    Answer => OCamlAnswer {
        Answer::Done,
        Answer::Declined(why: String),
        Answer::Refused(why: String),
    }
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
    let run = |plan: C, pass: door::Pass| run_through(kernel, plan, pass);
    match door::try_enter(&claims) {
        Some(pass) if !big => run(plan, pass),
        Some(pass) => released(cr, || run(plan, pass)),
        None => released(cr, || {
            let pass = door::enter(&claims);
            run(plan, pass)
        }),
    }
}

/// Runs a planned call whose claims `pass` holds, then hands them back.
fn run_through<C: Call>(kernel: &str, plan: C, pass: door::Pass) -> Answer {
    let r = plan.run();
    drop(pass);
    Answer::of(format_args!("nx.cpu {kernel}"), r)
}

/// [`execute`] with `buffers` rooted for the call.
///
/// # Safety
/// `buffers` is live: no collection has run since the external that
/// received it was entered.
unsafe fn rooted_execute<C: Call>(cr: &mut OCamlRuntime, kernel: &str, buffers: ocaml_sys::Value, planned: Result<C, String>) -> Answer {
    // SAFETY: as this function's contract.
    let root: BoxRoot<OCamlBytes> = BoxRoot::new(unsafe { OCaml::new(cr, buffers) });
    let answer = execute(cr, kernel, planned);
    drop(root);
    answer
}

/// A kernel's entry from OCaml: with `buffers` (an OCaml array of
/// `Nx_array.Buffer.t` records) rooted for the call, plans it by `plan` from
/// their memory, runs it through the door ([`execute`]) and answers as
/// [`OCamlAnswer`], a refusal naming `kernel`.
pub fn call<'a, C: Call>(
    cr: &'a mut OCamlRuntime,
    kernel: &str,
    rooted: BoxRoot<OCamlBytes>,
    plan: impl FnOnce(&[Memory]) -> Result<C, String>,
) -> OCaml<'a, OCamlAnswer> {
    // SAFETY: OCaml's types of every external that reaches here make
    // `buffers` an array of buffer records; the lock is held.
    let planned = unsafe { buffer_memories(rooted.get(cr).raw()) }.and_then(|mems| plan(&mems));
    let answer = execute(cr, kernel, planned);
    drop(rooted);
    answer.to_ocaml(cr)
}

/// The bytes of an OCaml string or bytes value.
///
/// # Safety
/// `v` must be a string or bytes value, live and unmoved while the slice
/// is used: no OCaml code or collection may run meanwhile, so the caller
/// holds the domain lock and allocates no OCaml value.
pub unsafe fn string_bytes<'b>(v: ocaml_sys::Value) -> &'b [u8] {
    // SAFETY: as this function's contract: the string's bytes, of its length.
    unsafe { std::slice::from_raw_parts(ocaml_sys::string_val(v), ocaml_sys::caml_string_length(v)) }
}

/// As [`call`], for an entry whose arguments `plan` reads in place (by
/// [`string_bytes`]) and whose `buffers` are not rooted: the buffers'
/// memory is read onto the stack where they are few, the call planned and,
/// where it is short and the door lets it in at once, run with the lock
/// held, so that no collection can move or free any argument meanwhile;
/// otherwise `buffers` is rooted before the lock is released ([`execute`]).
///
/// # Safety
/// `buffers` must be the external's argument, an OCaml array of
/// `Nx_array.Buffer.t` records, and `plan` may read only the external's
/// other arguments: no OCaml value is allocated before it returns.
pub unsafe fn call_unrooted<'a, C: Call>(
    cr: &'a mut OCamlRuntime,
    kernel: &str,
    buffers: ocaml_sys::Value,
    plan: impl FnOnce(&[Memory]) -> Result<C, String>,
) -> OCaml<'a, OCamlAnswer> {
    let n = ocaml_sys::wosize_val(buffers);
    let planned = if n <= FEW_BUFFERS {
        let mut few = [Memory { base: std::ptr::null_mut(), bytes: 0 }; FEW_BUFFERS];
        // SAFETY: `buffers` is an array of buffer records (this function's
        // contract), `i` below its length; the lock is held.
        let mems = (0..n).try_for_each(|i| unsafe { buffer_memory(buffers, i) }.map(|m| few[i] = m));
        mems.and_then(|()| plan(&few[..n]))
    } else {
        // SAFETY: as above.
        unsafe { buffer_memories(buffers) }.and_then(|mems| plan(&mems))
    };
    let answer = match planned {
        // SAFETY (both): no OCaml value has been allocated since entry.
        Ok(plan) if plan.work() <= RELEASE_BYTES => match plan.with_claims(door::try_enter) {
            Some(pass) => run_through(kernel, plan, pass),
            None => unsafe { rooted_execute(cr, kernel, buffers, Ok(plan)) },
        },
        planned => unsafe { rooted_execute(cr, kernel, buffers, planned) },
    };
    answer.to_ocaml(cr)
}
