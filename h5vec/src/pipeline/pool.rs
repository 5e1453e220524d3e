//! h5vec's worker threads: the private pool that compresses and
//! decompresses chunks, writes deferred batches and builds strings ahead,
//! and [`for_each_parallel`] over it.

/// Threads to use.
fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// h5vec's own worker threads (one per core), which compress and
/// decompress chunks; `None` if the OS refused threads (then everything runs
/// on the calling thread). A private pool, not rayon's global one: h5vec
/// waits for its chunks, and a caller that is itself a task of the global
/// pool must not wait for work queued behind it.
pub(crate) fn pool() -> Option<&'static rayon::ThreadPool> {
    #[cfg(unix)] // The child of an isolated check has none of the parent's threads.
    if crate::forked::in_child() {
        return None;
    }
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads())
            .thread_name(|i| format!("h5vec-deflate-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// Runs `f` on every item, spread over the pool's threads.
pub(super) fn for_each_parallel<T: Send>(items: &mut [T], f: impl Fn(&mut T) + Sync) {
    use rayon::prelude::*;
    match pool() {
        Some(p) => p.install(|| items.par_iter_mut().for_each(&f)),
        None => items.iter_mut().for_each(f),
    }
}
