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
pub fn run_parts(parts: usize, work: impl Fn(usize) + Sync) {
    // A one-part job (every small call's) asks nothing of the pool's state.
    let helpers = if parts <= 1 { 0 } else { threads().min(parts) - 1 };
    if helpers == 0 {
        return (0..parts).for_each(work);
    }
    match pool() {
        Ok(p) => {
            use std::sync::atomic::{AtomicUsize, Ordering};
            let _job = job_lock().lock().unwrap_or_else(|e| e.into_inner());
            let next = AtomicUsize::new(0);
            let take = || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= parts {
                    break;
                }
                work(i)
            };
            p.in_place_scope(|s| {
                for _ in 0..helpers {
                    s.spawn(|_| take());
                }
                take()
            })
        }
        Err(_) => (0..parts).for_each(work),
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
    use std::sync::atomic::{AtomicUsize, Ordering};

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
}
