//! The query runtime's worker threads, one a core, each kept on a core of its own.
//!
//! A query's partitions run on the workers at once, and the workers wake one another all
//! through it (a task handed over, the allocator's lock on the address space released). Linux
//! puts a thread it wakes beside its waker when the thread's own core is not yet idle at that
//! instant, and then lets both share that core for a slice after slice while the other stays
//! idle: `perf sched` of first questions of a 17 MB Parquet file showed it in a third of them
//! (both workers on one core for 11–19 ms of a 20 ms query, the other core idle). Kept apart,
//! the same questions took 14.0–18.0 ms instead of 13.8–27.2 ms (12 fresh processes each,
//! interleaved, 2026-11-30). Other threads stay free to move away from a worker's core, and the
//! runtime's blocking threads (cold reads, dropping a session) are not kept anywhere.

/// How many worker threads the query runtime runs: one a core it may use. Read once: std
/// reads the control group's CPU quota files each time it is asked (`/proc/self/cgroup`, the
/// mount table, `cpu.max`), and every query asks (its partitions); the runtime's workers are
/// made once anyway.
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
}

/// Gives each of the first `workers` threads that [`Placement::place`] is called on a core of
/// its own among the ones this process may use, starting from a core chosen by the process id
/// (so that several Offload processes do not all begin on the first core).
#[derive(Debug)]
pub(crate) struct Placement {
    /// The cores, in the order they are handed out; empty when nothing is placed.
    cores: Vec<usize>,
    next: std::sync::atomic::AtomicUsize,
}

impl Placement {
    /// The runtime's worker threads are the first `workers` threads it starts: tokio starts
    /// them all when it is built, before any task can ask for a blocking thread.
    pub(crate) fn new(workers: usize) -> Self {
        let mut cores = allowed();
        if workers < 2 || cores.len() < 2 {
            cores.clear();
        } else {
            let start = std::process::id() as usize % cores.len();
            cores.rotate_left(start);
            cores.truncate(workers);
        }
        Self {
            cores,
            next: 0.into(),
        }
    }

    /// Keeps the calling thread on its core, when it is one of the first threads placed. Best
    /// effort: a core that cannot be set leaves the thread where the kernel puts it.
    pub(crate) fn place(&self) {
        let n = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Some(&core) = self.cores.get(n) {
            keep_on(core);
        }
    }
}

/// The cores this process may run on.
#[cfg(target_os = "linux")]
fn allowed() -> Vec<usize> {
    use rustix::thread::{CpuSet, sched_getaffinity};
    sched_getaffinity(None).map_or_else(
        |_| Vec::new(),
        |set| (0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect(),
    )
}

#[cfg(not(target_os = "linux"))]
fn allowed() -> Vec<usize> {
    Vec::new()
}

#[cfg(target_os = "linux")]
fn keep_on(core: usize) {
    let mut set = rustix::thread::CpuSet::new();
    set.set(core);
    if let Err(e) = rustix::thread::sched_setaffinity(None, &set) {
        tracing::debug!("a query thread stays unplaced: {e}");
    }
}

#[cfg(not(target_os = "linux"))]
fn keep_on(_core: usize) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The cores a new thread runs on after `placement` placed it (or did not).
    fn placed(placement: &std::sync::Arc<Placement>) -> Vec<usize> {
        let placement = placement.clone();
        std::thread::spawn(move || {
            placement.place();
            allowed()
        })
        .join()
        .unwrap()
    }

    /// The first two threads are each kept on one core, different ones, that the process may
    /// use; the third (a blocking thread) runs anywhere the process may, as a thread never
    /// placed does.
    #[test]
    fn the_workers_alone_get_a_core_each() {
        let all = allowed();
        if all.len() < 2 {
            eprintln!("one core: nothing to place");
            return;
        }
        let placement = std::sync::Arc::new(Placement::new(2));
        let (first, second, third) = (placed(&placement), placed(&placement), placed(&placement));
        assert_eq!(first.len(), 1);
        assert_eq!(second.len(), 1);
        assert_ne!(first, second);
        assert!(all.contains(&first[0]) && all.contains(&second[0]));
        assert_eq!(third, all);
        let unplaced = std::thread::spawn(allowed).join().unwrap();
        assert_eq!(unplaced, all);
    }

    /// One worker (or one core) is left wherever the kernel puts it.
    #[test]
    fn one_worker_is_not_placed() {
        let placement = std::sync::Arc::new(Placement::new(1));
        assert_eq!(placed(&placement), allowed());
    }
}
