//! The host's services to `Nx_array` and `Nx_cpu`: the thread count,
//! aligned buffers, narrow floats' bits, and checking a program's words.

use super::{big_blocks, small_blocks};
use super::boundary::{bigarray_memory, bigarray_struct};
use crate::core::dtype::Dtype;
use crate::core::isa;
use crate::core::narrow::Narrow;
use crate::core::pool;
use crate::ffi::wire::words;
use crate::loops::prog::Prog;
use ocaml_interop::{OCaml, OCamlBytes, OCamlFloat, OCamlInt, OCamlRuntime, ToOCaml};
use ocaml_sys::custom_operations;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

extern "C" {
    fn caml_ba_alloc(flags: c_int, num_dims: c_int, data: *mut c_void, dim: *mut isize) -> ocaml_sys::Value;
    fn free(p: *mut c_void);
    /// OCaml's custom operations of a bigarray (runtime/bigarray.c).
    static caml_ba_ops: custom_operations;
    /// The GC's custom_minor_max_size: custom blocks of more bytes are
    /// made in the major heap (runtime/custom.c).
    static caml_custom_minor_max_bsz: usize;
    /// Minor collections so far, of every domain (runtime/minor_gc.c).
    static caml_minor_collections_count: AtomicUsize;
    fn caml_minor_collection();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn mallopt(param: c_int, value: c_int) -> c_int;
}

/// Has glibc keep the memory of freed buffers below 32 MiB for the next
/// ones, unless the environment sets its own malloc tuning. The GC frees
/// buffers in batches, long after their last use (numpy frees each at once
/// and takes the same block back for the next array); by default glibc
/// then hands memory at the heap's top back to the kernel, and every fresh
/// result of a loop faulted its pages in again: a 316x316 `Nx.add` spent
/// more time in page faults than in adding. Blocks of 32 MiB and more (the
/// most glibc lets a heap hold) are still mapped afresh each time.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            let tuned = ["MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_"]
                .iter()
                .any(|v| std::env::var_os(v).is_some())
                || std::env::var("GLIBC_TUNABLES").is_ok_and(|t| t.contains("glibc.malloc"));
            if !tuned {
                // glibc's M_MMAP_THRESHOLD and M_TRIM_THRESHOLD.
                const MMAP_THRESHOLD: c_int = -3;
                const TRIM_THRESHOLD: c_int = -1;
                // SAFETY: mallopt changes glibc's policies only; a value it
                // refuses leaves them as they were.
                unsafe {
                    mallopt(MMAP_THRESHOLD, big_blocks::KEPT_FROM as c_int);
                    mallopt(TRIM_THRESHOLD, 128 << 20);
                }
            }
        });
    }
}

/// Bytes from which a buffer is laid on transparent huge pages, as numpy
/// does: a pass over it then walks the page tables once every 2 MiB
/// rather than every 4 KiB. Below, buffers take `small_blocks`' blocks.
const HUGE_FROM: usize = small_blocks::UP_TO;

/// `Bigarray`'s char kind, and its flags for data the GC frees or not.
const BA_CHAR: c_int = 0x0C;
const BA_MANAGED: c_int = 0x200;
const BA_EXTERNAL: c_int = 0;

/// The thread count kernels use.
#[ocaml_interop::export]
pub fn nx_cpu_threads(cr: &mut OCamlRuntime, _unit: OCaml<()>) -> OCaml<OCamlInt> {
    (pool::threads() as i64).to_ocaml(cr)
}

/// Bytes of the second-level cache kernels block work by
/// (`crate::core::caches::sizes`: the machine's report, 1 MiB without one).
#[ocaml_interop::export]
pub fn nx_cpu_l2_bytes(cr: &mut OCamlRuntime, _unit: OCaml<()>) -> OCaml<OCamlInt> {
    (crate::core::caches::sizes().l2 as i64).to_ocaml(cr)
}

/// Bytes below which a buffer's block is one that the next buffer of its
/// size takes back once the GC frees it, from `small_blocks`' shelf or
/// glibc's heap ([`big_blocks::KEPT_FROM`], from which blocks are kept
/// apart): `Nx_array` lets buffers up to that lie in the minor heap.
#[ocaml_interop::export]
pub fn nx_cpu_young_bytes(cr: &mut OCamlRuntime, _unit: OCaml<()>) -> OCaml<OCamlInt> {
    (big_blocks::KEPT_FROM as i64).to_ocaml(cr)
}

/// The instruction set kernels run: "avx512", "avx2" or "baseline"
/// (`crate::core::isa`).
#[ocaml_interop::export]
pub fn nx_cpu_isa(cr: &mut OCamlRuntime, _unit: OCaml<()>) -> OCaml<String> {
    isa::name().to_ocaml(cr)
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
/// kernel for huge pages (where transparent huge pages are on `madvise`);
/// from [`big_blocks::KEPT_FROM`], its block is one `big_blocks` keeps for
/// the next buffer of its size once the GC frees it. Below [`HUGE_FROM`],
/// its block is one of `small_blocks`' classes, which it keeps likewise
/// for the next buffer of the class. The first call tunes glibc to keep
/// freed memory ([`keep_freed_memory`]); a buffer that lies in the minor
/// heap may first run a minor collection ([`make_room_in_minor_heap`]).
#[ocaml_interop::export]
pub fn nx_cpu_alloc(cr: &mut OCamlRuntime, n: OCaml<OCamlInt>) -> OCaml<OCamlBytes> {
    let n: i64 = n.to_rust();
    let bytes = usize::try_from(n).unwrap_or_else(|_| panic!("Nx_array: buffer of {n} bytes"));
    keep_freed_memory();
    make_room_in_minor_heap(bytes);
    let out_of_memory = || -> ! { panic!("Nx_array: out of memory allocating {bytes} bytes") };
    let mut dim = bytes as isize;
    let v = if bytes >= big_blocks::KEPT_FROM {
        let p = big_blocks::take(bytes);
        if p.is_null() {
            out_of_memory();
        }
        // SAFETY: p is a block of at least `bytes` bytes that nothing else
        // holds; the bigarray owns it from here, and its ops' finaliser
        // gives it back to big_blocks once (see `finalize_kept`); the ops
        // word is the custom block's first, and caml_ba_alloc's result is
        // reachable from no root but ours until it returns. The caller
        // holds the domain lock.
        unsafe {
            let v = caml_ba_alloc(BA_CHAR | BA_MANAGED, 1, p, &mut dim);
            *(v as *mut *const custom_operations) = &kept_ops().0;
            v
        }
    } else if bytes >= HUGE_FROM {
        let p = big_blocks::fresh(bytes);
        if p.is_null() {
            out_of_memory();
        }
        // SAFETY: p is malloc-compatible memory of `bytes` bytes that the GC
        // frees (MANAGED); one dimension; the caller holds the domain lock.
        unsafe { caml_ba_alloc(BA_CHAR | BA_MANAGED, 1, p, &mut dim) }
    } else {
        let p = small_blocks::take(bytes);
        if p.is_null() {
            out_of_memory();
        }
        // SAFETY: as for a big block: p, 64-aligned, holds at least `bytes`
        // bytes that nothing else holds, given back to small_blocks once
        // by `finalize_kept` or freed by OCaml's finaliser of the last
        // sub-array sharing it (`free` takes small_blocks' blocks).
        unsafe {
            let v = caml_ba_alloc(BA_CHAR | BA_MANAGED, 1, p, &mut dim);
            *(v as *mut *const custom_operations) = &kept_ops().0;
            v
        }
    };
    // SAFETY: v is a fresh OCaml value of the runtime `cr` holds.
    unsafe { OCaml::new(cr, v) }
}

/// Bytes of buffers in the minor heap past which a minor collection runs
/// before the next buffer there; 0 for none (`nx_cpu_set_minor_pile`).
static MINOR_PILE: AtomicUsize = AtomicUsize::new(0);

/// Bytes of buffers made in the minor heap since the minor collection of
/// count [`SEEN_MINOR`]. Domains that make buffers at once may lose a
/// count to each other, which moves a collection, never a value.
static MADE_IN_MINOR: AtomicUsize = AtomicUsize::new(0);
static SEEN_MINOR: AtomicUsize = AtomicUsize::new(0);

/// Sets the pile of [`make_room_in_minor_heap`] (`Nx_array` does, once).
#[ocaml_interop::export]
pub fn nx_cpu_set_minor_pile(cr: &mut OCamlRuntime, bytes: OCaml<OCamlInt>) -> OCaml<()> {
    let bytes: i64 = bytes.to_rust();
    MINOR_PILE.store(usize::try_from(bytes).unwrap_or(0), Ordering::Relaxed);
    ().to_ocaml(cr)
}

/// Runs a minor collection before a buffer of `bytes` bytes where the
/// buffers made in the minor heap since the last one would pass the pile
/// with it: the dead among them are freed first and their blocks, still in
/// the caches, go to this buffer. Left to the GC, the collection runs just
/// after the buffer that passes the pile, which, live then, moves to the
/// major heap with the live ones, and lasts until a major cycle: a loop of
/// 316x316 results cycled through a dozen blocks, each written cold.
fn make_room_in_minor_heap(bytes: usize) {
    let pile = MINOR_PILE.load(Ordering::Relaxed);
    // SAFETY: a runtime global, read with the domain lock held.
    if pile == 0 || bytes > unsafe { caml_custom_minor_max_bsz } {
        return;
    }
    // SAFETY: as above; the count only grows.
    let count = || unsafe { caml_minor_collections_count.load(Ordering::Relaxed) };
    let (mut made, seen) = (MADE_IN_MINOR.load(Ordering::Relaxed), SEEN_MINOR.load(Ordering::Relaxed));
    let mut now = count();
    if seen != now {
        made = 0;
    }
    if made > 0 && made + bytes > pile {
        // SAFETY: the caller holds the domain lock and no OCaml value
        // unrooted (nx_cpu_alloc has only its int argument yet); the
        // collection runs no OCaml code.
        unsafe { caml_minor_collection() };
        (made, now) = (0, count());
    }
    MADE_IN_MINOR.store(made + bytes, Ordering::Relaxed);
    SEEN_MINOR.store(now, Ordering::Relaxed);
}

/// `struct caml_ba_proxy` of OCaml's `caml/bigarray.h`: a reference count,
/// the block the GC frees when it drops to 0, and a size read for mapped
/// files only.
#[repr(C)]
struct Proxy {
    refcount: usize,
    data: *mut c_void,
    size: usize,
}

/// Custom operations, `Sync` to be held in a static: no one writes them.
struct Ops(custom_operations);

// SAFETY: the operations are written once, before any reader has them,
// and only read afterwards; their pointers are to the runtime's functions
// and identifier, which never change.
unsafe impl Sync for Ops {}
// SAFETY: as for Sync.
unsafe impl Send for Ops {}

/// A bigarray's custom operations with [`finalize_kept`] as its finaliser:
/// the ops of a buffer whose block [`big_blocks`] or [`small_blocks`]
/// keeps. The rest are OCaml's own (its identifier included), so that
/// such a buffer compares, hashes and marshals as any bigarray, and
/// unmarshals as one.
fn kept_ops() -> &'static Ops {
    static OPS: OnceLock<Ops> = OnceLock::new();
    // SAFETY: caml_ba_ops is the runtime's, initialised before any OCaml
    // code runs, and never written.
    OPS.get_or_init(|| Ops(custom_operations { finalize: Some(finalize_kept), ..unsafe { caml_ba_ops } }))
}

/// The finaliser of a buffer of [`kept_ops`]: as OCaml's own for a managed
/// bigarray (`caml_ba_finalize`), but the block goes back to
/// [`big_blocks`] or [`small_blocks`], by its size. A bigarray made from
/// the buffer by OCaml (`sub`, `reshape`) shares its block through a
/// proxy, the last of them to die frees it: where that is one of OCaml's,
/// `free` does so, as for any block those two hand out.
unsafe extern "C" fn finalize_kept(v: ocaml_sys::Value) {
    // SAFETY: v is a dead bigarray of kept_ops, which the GC finalises
    // once; its struct, dims and proxy are as nx_cpu_alloc made them, its
    // one dimension the bytes asked for; a proxy is OCaml's struct
    // caml_ba_proxy, whose refcount is an atomic word (`Proxy`).
    unsafe {
        let ba = bigarray_struct(v);
        let bytes = *(*ba).dim.as_ptr() as usize;
        let proxy = (*ba).proxy as *mut Proxy;
        let block = if proxy.is_null() {
            (*ba).data
        } else {
            if AtomicUsize::from_ptr(&raw mut (*proxy).refcount).fetch_sub(1, Ordering::AcqRel) != 1 {
                return;
            }
            let block = (*proxy).data;
            free(proxy as *mut c_void);
            block
        };
        if bytes < small_blocks::UP_TO {
            small_blocks::give_back(block, bytes);
        } else {
            big_blocks::give_back(block, bytes);
        }
    }
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
    let v = unsafe { caml_ba_alloc(BA_CHAR | BA_EXTERNAL, 1, mem.base as *mut c_void, &mut dim) };
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
