//! The thread pool the kernels split their work over, and its size.
//!
//! The size is read from `NX_CPU_THREADS` when the pool is first used (a
//! positive integer; otherwise the number of cores the process may use) and
//! changed by [`set_threads`]. Results never depend on it: kernels split work
//! only along boundaries their association already has.
//!
//! The pool runs one job on several threads at a time: a job that wants more
//! than one thread takes the job lock for its extent, so a second such job
//! waits for the first to end (the contract's "Threads" sentence).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

/// The environment variable read for the initial thread count.
pub const THREADS_VAR: &str = "NX_CPU_THREADS";

struct Pool {
    threads: usize,
    pool: Option<Arc<rayon::ThreadPool>>,
}

fn state() -> &'static RwLock<Pool> {
    static STATE: OnceLock<RwLock<Pool>> = OnceLock::new();
    STATE.get_or_init(|| RwLock::new(Pool { threads: initial_threads(), pool: None }))
}

fn job_lock() -> &'static Mutex<()> {
    static JOB: Mutex<()> = Mutex::new(());
    &JOB
}

fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

fn initial_threads() -> usize {
    std::env::var(THREADS_VAR)
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(cores)
}

/// The number of threads kernels use.
pub fn threads() -> usize {
    state().read().unwrap_or_else(|e| e.into_inner()).threads
}

/// Sets the number of threads kernels use, from 1 to 1024; calls already
/// running keep the pool they started with.
pub fn set_threads(n: usize) -> Result<(), String> {
    if n == 0 || n > 1024 {
        return Err(format!("thread count {n} is not between 1 and 1024"));
    }
    let mut s = state().write().unwrap_or_else(|e| e.into_inner());
    if s.threads != n {
        s.threads = n;
        s.pool = None;
    }
    Ok(())
}

fn pool() -> Result<Arc<rayon::ThreadPool>, String> {
    if let Some(p) = &state().read().unwrap_or_else(|e| e.into_inner()).pool {
        return Ok(p.clone());
    }
    let mut s = state().write().unwrap_or_else(|e| e.into_inner());
    if s.pool.is_none() {
        let p = rayon::ThreadPoolBuilder::new()
            .num_threads(s.threads)
            .thread_name(|i| format!("nx_cpu-{i}"))
            .build()
            .map_err(|e| format!("cannot start {} threads: {e}", s.threads))?;
        s.pool = Some(Arc::new(p));
    }
    Ok(s.pool.clone().expect("the pool was just built"))
}

/// Runs `parts` independent parts of a job, `work(i)` for each `i`: the
/// calling thread and as many of the pool's threads as make up the thread
/// count take parts in turn until none is left, so that the work starts at
/// once, without waiting for a sleeping thread to wake. On the calling
/// thread alone where one thread is set, the job has one part or the pool's
/// threads cannot be started. Each part's effects must not depend on which
/// thread runs it or in which order, and `work` may not use the pool itself
/// (`rayon::join`, [`install`]): the calling thread is not one of its own.
///
/// The caller never waits for a helper to wake: it closes the job once no
/// part is left and waits only for the helpers already inside it (each
/// running a part), so a helper the system starts late finds the job
/// closed and leaves. A helper lingers [`LINGER`] after its job, spinning,
/// and joins the next job published meanwhile without being woken (a
/// thread's wake-up costs tens of microseconds, a call of a few hundred
/// microseconds split over two threads loses much of its gain to it).
pub fn run_parts(parts: usize, work: impl Fn(usize) + Sync) {
    // A one-part job (every small call's) asks nothing of the pool's state.
    let helpers = helpers_for(parts);
    if helpers == 0 {
        return (0..parts).for_each(work);
    }
    match pool() {
        // Helpers lingering since the last job join it on their own; the
        // others are woken.
        Ok(p) => publish(parts, helpers, &work, |job| {
            for _ in 0..helpers.saturating_sub(LINGERING.load(Ordering::SeqCst)) {
                let job = job.clone();
                p.spawn(move || linger(Some(job)));
            }
        }),
        Err(_) => (0..parts).for_each(work),
    }
}

/// Runs `parts` parts as [`run_parts`] does, but shared only with helpers
/// lingering after an earlier job. For work too short to repay a wake-up:
/// where none lingers, the calling thread runs every part, and then, where
/// the last such call came less than [`LINGER`] before, wakes the helpers,
/// which linger for the next; so calls that follow one another (a loop
/// over arrays in cache) share their parts, and a call on its own (at a
/// prompt) never waits for a wake-up. On a 2-core Zen 3, a wake-up after
/// each call cost a call of a + b over 316² float32, 2 ms after the last,
/// some 5 µs of 35 to 60.
pub fn share_parts(parts: usize, work: impl Fn(usize) + Sync) {
    let helpers = helpers_for(parts);
    if helpers == 0 {
        return (0..parts).for_each(work);
    }
    if LINGERING.load(Ordering::SeqCst) > 0 {
        return publish(parts, helpers, &work, |_| {});
    }
    (0..parts).for_each(work);
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    static LAST: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let now = START.get_or_init(std::time::Instant::now).elapsed().as_nanos() as u64 + 1;
    let last = LAST.swap(now, Ordering::Relaxed);
    // Once until they start: calls faster than a wake-up would queue more.
    if last > 0 && now - last < LINGER.as_nanos() as u64 && !WAKING.swap(true, Ordering::SeqCst) {
        match pool() {
            Ok(p) => (0..helpers).for_each(|_| p.spawn(|| linger(None))),
            Err(_) => WAKING.store(false, Ordering::SeqCst),
        }
    }
}

/// The helpers a job of `parts` parts takes besides its caller.
fn helpers_for(parts: usize) -> usize {
    if parts <= 1 { 0 } else { threads().min(parts) - 1 }
}

/// Publishes a job of `parts` parts for up to `helpers` helpers, calls
/// `wake` on it, runs parts until none is left, closes it, waits for the
/// helpers inside, and resumes a helper's panic.
fn publish(parts: usize, helpers: usize, work: &(dyn Fn(usize) + Sync), wake: impl FnOnce(&Arc<Job>)) {
    let _job = job_lock().lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: the lifetime is erased only for helpers to reach `work`
    // through the job; a helper calls it only while it is counted inside
    // the job, and `Close` (below, run also where a part panics) closes
    // the job and waits until none is inside before this function
    // returns, while `work` lives.
    let work = unsafe { std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), *const (dyn Fn(usize) + Sync + 'static)>(work) };
    let job = Arc::new(Job { state: AtomicUsize::new(0), next: AtomicUsize::new(0), parts, helpers, work: Work(work), panic: Mutex::new(None) });
    *latest() = Some(job.clone());
    EPOCH.fetch_add(1, Ordering::SeqCst);
    wake(&job);
    let close = Close(&job);
    job.take();
    drop(close);
    *latest() = None;
    let panic = job.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(panic) = panic {
        std::panic::resume_unwind(panic);
    }
}

/// How long a helper spins after a job for the next one before it sleeps.
pub const LINGER: std::time::Duration = std::time::Duration::from_micros(500);

/// The state bit of a job whose caller has closed it.
const CLOSED: usize = 1 << (usize::BITS - 1);

/// A job's `work`, its lifetime erased ([`run_parts`] says why that is
/// sound).
struct Work(*const (dyn Fn(usize) + Sync + 'static));

// SAFETY: `work` is `Sync`, so calling it from several threads at once is
// sound; the pointer is dereferenced only while the job is open or a
// helper is counted inside it (see `run_parts`).
unsafe impl Send for Work {}
// SAFETY: as above.
unsafe impl Sync for Work {}

/// A job the calling thread shares with its helpers.
struct Job {
    /// The helpers inside the job, and [`CLOSED`] once the caller has
    /// closed it.
    state: AtomicUsize,
    /// The next part not yet taken.
    next: AtomicUsize,
    parts: usize,
    /// The most helpers the job takes.
    helpers: usize,
    work: Work,
    /// The first panic of a helper's part, resumed by the caller.
    panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

impl Job {
    /// Runs parts not yet taken until none is left.
    fn take(&self) {
        // SAFETY: the caller of `take` is the job's caller, or a helper
        // counted inside the job (`help`): `work` lives (`run_parts`).
        let work = unsafe { &*self.work.0 };
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i >= self.parts {
                break;
            }
            work(i)
        }
    }

    /// Enters the job unless it is closed or full, runs parts, and leaves.
    fn help(&self) {
        let mut s = self.state.load(Ordering::Acquire);
        loop {
            if s & CLOSED != 0 || s >= self.helpers {
                return;
            }
            match self.state.compare_exchange_weak(s, s + 1, Ordering::Acquire, Ordering::Acquire) {
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.take())) {
            self.panic.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(panic);
        }
        self.state.fetch_sub(1, Ordering::Release);
    }
}

/// Closes its job when dropped (also where the caller's part panics) and
/// waits for the helpers inside it to leave.
struct Close<'a>(&'a Job);

impl Drop for Close<'_> {
    fn drop(&mut self) {
        let mut s = self.0.state.fetch_or(CLOSED, Ordering::AcqRel);
        let mut spins = 0u32;
        while s & !CLOSED != 0 {
            spins += 1;
            if spins.is_multiple_of(64) {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
            s = self.0.state.load(Ordering::Acquire);
        }
    }
}

/// The job open now, for lingering helpers to join.
fn latest() -> std::sync::MutexGuard<'static, Option<Arc<Job>>> {
    static LATEST: Mutex<Option<Arc<Job>>> = Mutex::new(None);
    LATEST.lock().unwrap_or_else(|e| e.into_inner())
}

/// Counts the jobs published.
static EPOCH: AtomicUsize = AtomicUsize::new(0);
/// The helpers lingering now.
static LINGERING: AtomicUsize = AtomicUsize::new(0);

/// Whether [`share_parts`] has woken helpers that have not yet started.
static WAKING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A helper's task: helps `job` where there is one (else it was woken by
/// [`share_parts`]), then spins up to [`LINGER`] after each job for the
/// next one published (by [`EPOCH`]), helps it, and so on.
/// It stops counting itself lingering before its last look at the epoch,
/// so a job published meanwhile either sees it not lingering (and wakes
/// another) or is seen by it. While it spins it yields its core now and
/// then, and runs the pool's other pending work ([`install`]'s halves of
/// a `rayon::join`, which would otherwise wait for it); a task it runs so
/// that is itself a helper's only helps.
fn linger(job: Option<Arc<Job>>) {
    thread_local! {
        /// Whether this thread lingers already (further down its stack).
        static HERE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    match job {
        Some(job) => job.help(),
        None => WAKING.store(false, Ordering::SeqCst),
    }
    if HERE.replace(true) {
        return;
    }
    let mut seen = EPOCH.load(Ordering::SeqCst);
    LINGERING.fetch_add(1, Ordering::SeqCst);
    let mut since = std::time::Instant::now();
    let mut spins = 0u32;
    loop {
        let now = EPOCH.load(Ordering::SeqCst);
        if now == seen {
            spins += 1;
            if spins.is_multiple_of(256) && since.elapsed() > LINGER {
                LINGERING.fetch_sub(1, Ordering::SeqCst);
                if EPOCH.load(Ordering::SeqCst) == seen {
                    HERE.set(false);
                    return;
                }
                LINGERING.fetch_add(1, Ordering::SeqCst);
            }
            if spins.is_multiple_of(256) {
                // Other pending work of the pool's, then the core to any
                // thread waiting for it (where the machine has more
                // threads to run than cores, a spinning helper would
                // otherwise take the calling thread's time).
                rayon::yield_now();
                std::thread::yield_now();
            }
            std::hint::spin_loop();
            continue;
        }
        seen = now;
        let open = latest().clone();
        if let Some(job) = open {
            job.help();
        }
        since = std::time::Instant::now();
    }
}

/// Runs `f` in the pool, so that what it runs on rayon (`rayon::join`) uses
/// the pool's threads; on the calling thread alone where one thread is set.
pub fn install<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if threads() == 1 {
        return f();
    }
    match pool() {
        Ok(p) => {
            let _job = job_lock().lock().unwrap_or_else(|e| e.into_inner());
            p.install(f)
        }
        Err(_) => f(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_every_part_once_whatever_the_threads() {
        for n in [1, 2, 3] {
            set_threads(n).unwrap();
            let hits: Vec<AtomicUsize> = (0..100).map(|_| AtomicUsize::new(0)).collect();
            run_parts(100, |i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
        }
        assert!(set_threads(0).is_err());
    }

    #[test]
    fn shares_every_part_once_with_helpers_lingering_or_asleep() {
        for n in [1, 2, 3] {
            set_threads(n).unwrap();
            // Right after a job its helpers linger; LINGER later they sleep.
            for pause in [std::time::Duration::ZERO, 4 * LINGER] {
                run_parts(4, |_| {});
                std::thread::sleep(pause);
                let hits: Vec<AtomicUsize> = (0..100).map(|_| AtomicUsize::new(0)).collect();
                share_parts(100, |i| {
                    hits[i].fetch_add(1, Ordering::Relaxed);
                });
                assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
            }
        }
        // A helper lingering after a job, or woken by two shared jobs in
        // quick succession, takes parts of a job long enough to join
        // (tries again where the system kept it from running).
        set_threads(2).unwrap();
        let wakers: [(&str, fn()); 2] = [("a job", || run_parts(4, |_| {})), ("two shared jobs", || (0..2).for_each(|_| share_parts(4, |_| {})))];
        for (name, wake) in wakers {
            let shared = (0..20).any(|_| {
                std::thread::sleep(4 * LINGER);
                wake();
                std::thread::sleep(LINGER / 5);
                let ids = Mutex::new(std::collections::HashSet::new());
                share_parts(16, |_| {
                    ids.lock().unwrap().insert(std::thread::current().id());
                    std::thread::sleep(LINGER / 4);
                });
                ids.into_inner().unwrap().len() > 1
            });
            assert!(shared, "no helper lingering after {name} took a part of the next");
        }
    }
}
