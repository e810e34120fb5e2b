//! The OCaml boundary: the one module that knows OCaml values, rooting and
//! the domain lock.
//!
//! OCaml passes a call as words (a program, then the views: each its dtype,
//! its buffer's position in the buffers array, its rank, offset, shape and
//! strides) and an array of buffers, the records of `Nx_array.Buffer`, whose
//! field 0 is a char bigarray. Everything OCaml passes is checked here and in
//! the kernels before any memory is touched: an unknown dtype, a buffer
//! index out of range or a layout that leaves its buffer is refused.

use crate::answer::Answer;
use crate::call::Call;
use crate::door;
use crate::dtype::Dtype;
use crate::layout::Memory;
use crate::map;
use crate::pool;
use crate::prog::Prog;
use crate::reduction;
use crate::narrow::Narrow;
use crate::wire::{loads, pads, reduction_of, views, words, Reader};
use ocaml_interop::{BoxRoot, OCaml, OCamlBytes, OCamlFloat, OCamlInt, OCamlRuntime, ToOCaml};
use ocaml_sys::bigarray::Bigarray;
use std::os::raw::{c_int, c_void};

extern "C" {
    fn caml_enter_blocking_section_no_pending();
    fn caml_leave_blocking_section();
    fn caml_ba_alloc(flags: c_int, num_dims: c_int, data: *mut c_void, dim: *mut isize) -> ocaml_sys::Value;
    fn posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> c_int;
    #[cfg(target_os = "linux")]
    fn madvise(addr: *mut c_void, len: usize, advice: c_int) -> c_int;
}

/// Bytes from which a buffer is laid on transparent huge pages, as numpy
/// does: a pass over it then walks the page tables once every 2 MiB
/// rather than every 4 KiB.
const HUGE_FROM: usize = 4 << 20;

/// A huge page of x86-64 and aarch64 (4 KiB granules) Linux.
const HUGE_PAGE: usize = 2 << 20;

/// Linux's `MADV_HUGEPAGE`.
#[cfg(target_os = "linux")]
const MADV_HUGEPAGE: c_int = 14;

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
const BA_CHAR: isize = 0x0C;
const BA_MANAGED: c_int = 0x200;
const BA_EXTERNAL: c_int = 0;

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
unsafe fn bigarray_memory(v: ocaml_sys::Value) -> Result<Memory, String> {
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

/// The thread count kernels use.
#[ocaml_interop::export]
pub fn nx_cpu_threads(cr: &mut OCamlRuntime, _unit: OCaml<()>) -> OCaml<OCamlInt> {
    (pool::threads() as i64).to_ocaml(cr)
}

/// Sets the thread count; "" or why not.
#[ocaml_interop::export]
pub fn nx_cpu_set_threads(cr: &mut OCamlRuntime, n: OCaml<OCamlInt>) -> OCaml<String> {
    let n: i64 = n.to_rust();
    let r = usize::try_from(n).map_err(|_| format!("thread count {n} is negative")).and_then(pool::set_threads);
    r.err().unwrap_or_default().to_ocaml(cr)
}

/// A char bigarray of `n` bytes, aligned to 64 bytes, uninitialised, freed
/// by the GC. From [`HUGE_FROM`] bytes it starts on a huge page and asks the
/// kernel for huge pages (where transparent huge pages are on `madvise`).
#[ocaml_interop::export]
pub fn nx_cpu_alloc(cr: &mut OCamlRuntime, n: OCaml<OCamlInt>) -> OCaml<OCamlBytes> {
    let n: i64 = n.to_rust();
    let bytes = usize::try_from(n).unwrap_or_else(|_| panic!("Nx_array: buffer of {n} bytes"));
    let huge = bytes >= HUGE_FROM;
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: posix_memalign writes p; 64 and HUGE_PAGE are powers of two
    // multiple of the pointer size; a size of 0 is asked as 1 so the
    // pointer is freeable.
    let rc = unsafe { posix_memalign(&mut p, if huge { HUGE_PAGE } else { 64 }, bytes.max(1)) };
    if rc != 0 || p.is_null() {
        panic!("Nx_array: out of memory allocating {bytes} bytes");
    }
    #[cfg(target_os = "linux")]
    if huge {
        // SAFETY: [p, p + bytes) is this allocation, p page-aligned; the
        // advice changes how the kernel backs it, never its contents. A
        // refusal (no transparent huge pages) leaves ordinary pages.
        unsafe { madvise(p, bytes, MADV_HUGEPAGE) };
    }
    let mut dim = bytes as isize;
    // SAFETY: p is malloc-compatible memory of `bytes` bytes that the GC
    // frees (MANAGED); one dimension; the caller holds the domain lock.
    let v = unsafe { caml_ba_alloc(BA_CHAR as c_int | BA_MANAGED, 1, p, &mut dim) };
    // SAFETY: v is a fresh OCaml value of the runtime `cr` holds.
    unsafe { OCaml::new(cr, v) }
}

/// A char bigarray over the data of any bigarray, which the caller keeps
/// alive as long as the view (`Nx_array.Buffer` holds both).
#[ocaml_interop::export]
pub fn nx_cpu_bytes_of(cr: &mut OCamlRuntime, ba: OCaml<OCamlBytes>) -> OCaml<OCamlBytes> {
    // SAFETY: OCaml's type of the external makes `ba` a bigarray; the lock is held.
    let mem = unsafe { bigarray_memory(ba.raw()) }.unwrap_or_else(|e| panic!("Nx_array: {e}"));
    let mut dim = mem.bytes as isize;
    // SAFETY: an EXTERNAL bigarray is never freed by the GC; its data stays
    // valid while the original lives, which `Nx_array.Buffer` guarantees.
    let v = unsafe { caml_ba_alloc(BA_CHAR as c_int | BA_EXTERNAL, 1, mem.base as *mut c_void, &mut dim) };
    // SAFETY: v is a fresh OCaml value of the runtime `cr` holds.
    unsafe { OCaml::new(cr, v) }
}

/// The bits of a narrow float dtype (by code) nearest a float, rounded once.
#[ocaml_interop::export]
pub fn nx_cpu_narrow_encode(cr: &mut OCamlRuntime, code: OCaml<OCamlInt>, x: OCaml<OCamlFloat>) -> OCaml<OCamlInt> {
    let code: i64 = code.to_rust();
    let w = Dtype::of_code(code).and_then(Narrow::of).unwrap_or_else(|| panic!("Nx_array: dtype {code} is not a narrow float"));
    (w.encode_f64(x.to_rust()) as i64).to_ocaml(cr)
}

/// The value of a narrow float dtype's (by code) bits.
#[ocaml_interop::export]
pub fn nx_cpu_narrow_decode(cr: &mut OCamlRuntime, code: OCaml<OCamlInt>, bits: OCaml<OCamlInt>) -> OCaml<OCamlFloat> {
    let code: i64 = code.to_rust();
    let bits: i64 = bits.to_rust();
    let w = Dtype::of_code(code).and_then(Narrow::of).unwrap_or_else(|| panic!("Nx_array: dtype {code} is not a narrow float"));
    (w.decode(bits as u16) as f64).to_ocaml(cr)
}

/// Checks a program's words: (node dtype codes, "") or ([||], why not).
#[ocaml_interop::export]
pub fn nx_cpu_prog_check(cr: &mut OCamlRuntime, prog: OCaml<OCamlBytes>) -> OCaml<(OCamlBytes, String)> {
    let r = words(prog.as_bytes()).and_then(|w| Prog::decode(&w));
    let (codes, msg) = match r {
        Ok(p) => (p.dtypes.iter().map(|d| d.code()).collect::<Vec<u8>>(), String::new()),
        Err(e) => (Vec::new(), e),
    };
    (codes, msg).to_ocaml(cr)
}

/// Runs a planned call through the door: its claims taken at once (waiting,
/// with the domain lock released, while another call holds a conflicting
/// one), its work run with the lock released where it is long.
fn execute<C: Call>(cr: &mut OCamlRuntime, kernel: &str, planned: Result<C, String>) -> Answer {
    let plan = match planned {
        Err(e) => return Answer::Refused(format!("nx.cpu {kernel}: {e}")),
        Ok(plan) => plan,
    };
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

/// `Nx_cpu.map`: a program's words, the views' words (destinations first),
/// the loads' pads, the number of destinations and the buffers. Answers
/// (0, "") for Done, (1, why) for Declined, (2, why) for a refusal.
#[ocaml_interop::export]
pub fn nx_cpu_map(
    cr: &mut OCamlRuntime,
    prog: OCaml<String>,
    view_words: OCaml<OCamlBytes>,
    pad_words: OCaml<OCamlBytes>,
    n_dsts: OCaml<OCamlInt>,
    buffers: OCaml<OCamlBytes>,
) -> OCaml<(OCamlInt, String)> {
    let n_dsts: i64 = n_dsts.to_rust();
    // The buffers stay alive, rooted, until the call returns.
    let rooted: BoxRoot<OCamlBytes> = BoxRoot::new(buffers);
    // SAFETY: OCaml's types make `buffers` an array of buffer records; the
    // lock is held.
    let planned = unsafe { buffer_memories(rooted.get(cr).raw()) }.and_then(|mems| {
        let p = Prog::decode(&words(prog.as_bytes())?)?;
        let all = views(&words(view_words.as_bytes())?, &mems)?;
        let n_dsts = usize::try_from(n_dsts).ok().filter(|&n| n <= all.len()).ok_or("a destination count past the views")?;
        let pads = pads(&words(pad_words.as_bytes())?)?;
        let (dsts, operands) = (all[..n_dsts].to_vec(), all[n_dsts..].to_vec());
        map::plan_loads(p, dsts, loads(operands, pads)?)
    });
    let answer = execute(cr, "map", planned);
    drop(rooted);
    answer_to_ocaml(cr, answer)
}

/// `Nx_cpu.reduce` and `Nx_cpu.scan`: a program's words, the views' words
/// (destinations, then a scan's carry if any, then the loads), the loads'
/// pads, the call's words and the buffers. The call's words: 0, the loop's
/// rank and shape, the axes' count and axes, the reductions' count and
/// (code, output) each, for a reduce; 1, the rank and shape, the axis, a
/// code and an output, whether a carry is given (0 or 1), for a scan.
#[ocaml_interop::export]
pub fn nx_cpu_reduction(
    cr: &mut OCamlRuntime,
    prog: OCaml<String>,
    view_words: OCaml<OCamlBytes>,
    pad_words: OCaml<OCamlBytes>,
    call_words: OCaml<OCamlBytes>,
    buffers: OCaml<OCamlBytes>,
) -> OCaml<(OCamlInt, String)> {
    let rooted: BoxRoot<OCamlBytes> = BoxRoot::new(buffers);
    let mut kernel = "reduce";
    // SAFETY: as in `nx_cpu_map`.
    let planned = unsafe { buffer_memories(rooted.get(cr).raw()) }.and_then(|mems| {
        let p = Prog::decode(&words(prog.as_bytes())?)?;
        let call = words(call_words.as_bytes())?;
        let mut r = Reader::new(&call, "reduction");
        let scan = r.count("kind")? == 1;
        let rank = r.count("rank")?;
        let shape = r.counts(rank, "extent")?;
        let pads = pads(&words(pad_words.as_bytes())?)?;
        let all = views(&words(view_words.as_bytes())?, &mems)?;
        if scan {
            kernel = "scan";
            let axis = r.count("axis")?;
            let red = reduction_of(r.word()?)?;
            let k = r.count("output")?;
            let with_carry = r.count("carry")? == 1;
            r.finish()?;
            let (n_dsts, n_carry) = (red.outputs(), with_carry as usize);
            if all.len() < n_dsts + n_carry {
                return Err(format!("{} arrays for a {red:?} scan's destinations and carry", all.len()));
            }
            let carry = with_carry.then(|| all[n_dsts].clone());
            let operands = all[n_dsts + n_carry..].to_vec();
            reduction::plan_scan(p, shape, axis, (red, k), carry, all[..n_dsts].to_vec(), loads(operands, pads)?)
        } else {
            let axes = { let n = r.count("axis count")?; r.counts(n, "axis")? };
            let n = r.count("reduction count")?;
            let mut rs = Vec::with_capacity(n.min(64));
            for _ in 0..n {
                let red = reduction_of(r.word()?)?;
                rs.push((red, r.count("output")?));
            }
            r.finish()?;
            let n_dsts: usize = rs.iter().map(|(red, _)| red.outputs()).sum();
            if all.len() < n_dsts {
                return Err(format!("{} arrays for reductions that write {n_dsts}", all.len()));
            }
            let operands = all[n_dsts..].to_vec();
            reduction::plan_reduce(p, shape, axes, rs, all[..n_dsts].to_vec(), loads(operands, pads)?)
        }
    });
    let answer = execute(cr, kernel, planned);
    drop(rooted);
    answer_to_ocaml(cr, answer)
}
