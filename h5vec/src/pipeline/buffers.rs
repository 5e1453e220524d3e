//! Buffers kept between batches and between writers, so long writes and
//! loads do not allocate (and fault in) afresh each time: byte buffers of
//! compressed chunks ([`take_buffers`], [`give_buffers`]) and typed batch
//! buffers ([`take_vec`], [`give_vec`], [`PooledVec`]), each pool capped,
//! with a separate one in the child of an isolated check.

use crate::raw::Pod;

/// Byte buffers for compressed chunks, kept between batches.
static BUFFERS: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());
/// [`BUFFERS`] in the child of an isolated check ([`crate::forked::fork_safe`]).
static CHILD_BUFFERS: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());

/// Most buffers kept in the pool, and most bytes of them.
const POOL_MAX: usize = 64;
const CHUNK_POOL_BYTES: usize = 64 << 20;

pub(crate) fn take_buffers(n: usize) -> Vec<Vec<u8>> {
    let mut p = crate::forked::fork_safe(&BUFFERS, &CHILD_BUFFERS)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    (0..n).map(|_| p.pop().unwrap_or_default()).collect()
}

/// Keeps `bufs` for later batches: at most [`POOL_MAX`] buffers and
/// [`CHUNK_POOL_BYTES`] bytes in all, none over [`TYPED_MAX_ONE`] (chunks can
/// be large; a pool of the largest would hold gigabytes for good).
pub(crate) fn give_buffers(bufs: Vec<Vec<u8>>) {
    let mut p = crate::forked::fork_safe(&BUFFERS, &CHILD_BUFFERS)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let mut total: usize = p.iter().map(Vec::capacity).sum();
    for b in bufs {
        let n = b.capacity();
        if p.len() < POOL_MAX && n <= TYPED_MAX_ONE && total + n <= CHUNK_POOL_BYTES {
            total += n;
            p.push(b);
        }
    }
}

/// Batch buffers of writers that are done, by element type, kept for the
/// next writer ([`take_vec`], [`give_vec`]). A save's batch buffers are a
/// few MiB; allocated afresh by every save, their page faults were a sixth
/// of a W1 save where freed memory goes back to the system (glibc with a
/// fixed `mmap_threshold`, as `compare` runs).
static TYPED: std::sync::Mutex<Vec<(usize, Box<dyn std::any::Any + Send>)>> =
    std::sync::Mutex::new(Vec::new());
/// [`TYPED`] in the child of an isolated check ([`crate::forked::fork_safe`]).
static CHILD_TYPED: std::sync::Mutex<Vec<(usize, Box<dyn std::any::Any + Send>)>> =
    std::sync::Mutex::new(Vec::new());

/// Most bytes of buffers [`TYPED`] keeps, and most bytes of one of them.
const TYPED_MAX_BYTES: usize = 32 << 20;
const TYPED_MAX_ONE: usize = 8 << 20;

/// An empty buffer for `T` values: one a finished writer gave back (its
/// room kept), else a new one.
pub(crate) fn take_vec<T: Pod>() -> Vec<T> {
    let mut p = crate::forked::fork_safe(&TYPED, &CHILD_TYPED)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    match p.iter().rposition(|(_, b)| b.is::<Vec<T>>()) {
        Some(i) => {
            let (_, b) = p.remove(i);
            drop(p);
            let mut v = b.downcast::<Vec<T>>().map(|b| *b).unwrap_or_default();
            v.clear();
            v
        }
        None => Vec::new(),
    }
}

/// Keeps `v`'s room for a later [`take_vec`], within [`TYPED_MAX_BYTES`]
/// (the oldest buffers go first); very large buffers are freed.
pub(crate) fn give_vec<T: Pod>(mut v: Vec<T>) {
    let bytes = v.capacity().saturating_mul(std::mem::size_of::<T>());
    if bytes == 0 || bytes > TYPED_MAX_ONE {
        return;
    }
    v.clear();
    let mut p = crate::forked::fork_safe(&TYPED, &CHILD_TYPED)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    p.push((bytes, Box::new(v)));
    let mut total: usize = p.iter().map(|(n, _)| n).sum();
    let mut first = 0;
    while total > TYPED_MAX_BYTES && first < p.len() {
        total -= p[first].0;
        first += 1;
    }
    let gone: Vec<_> = p.drain(..first).collect();
    drop(p);
    drop(gone);
}

/// A buffer from [`take_vec`] that goes back with [`give_vec`] when
/// dropped: the batch buffers of decoders, which a load allocates afresh
/// otherwise (W1: about 3 MiB a load).
pub(crate) struct PooledVec<T: Pod>(Vec<T>);

impl<T: Pod> PooledVec<T> {
    /// An empty buffer, with the room of one given back earlier if any.
    pub(crate) fn take() -> Self {
        PooledVec(take_vec())
    }
}

impl<T: Pod> std::ops::Deref for PooledVec<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T: Pod> std::ops::DerefMut for PooledVec<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.0
    }
}

impl<T: Pod> Drop for PooledVec<T> {
    fn drop(&mut self) {
        give_vec(std::mem::take(&mut self.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdf5_sys::h5i::hid_t;

    /// Pod types of these tests alone, so buffers other tests give back to
    /// the process-wide pool never answer their `take_vec`.
    macro_rules! probe {
        ($name:ident) => {
            #[derive(Clone, Copy, Default, Debug, PartialEq)]
            struct $name(u64);
            // SAFETY: one u64: no padding, every bit pattern valid; its HDF5
            // types are never asked for (the value never reaches HDF5).
            unsafe impl Pod for $name {
                fn mem_type() -> hid_t {
                    unreachable!("never written")
                }
                fn file_type() -> hid_t {
                    unreachable!("never written")
                }
                const ENCODED: &'static str = "UInt64";
                fn accepts(_: &crate::raw::TypeInfo) -> bool {
                    false
                }
            }
        };
    }

    #[test]
    fn pooled_decoder_buffers_go_back_when_dropped() {
        probe!(ProbeC);
        let mut a = PooledVec::<ProbeC>::take();
        assert_eq!(a.capacity(), 0);
        a.extend([ProbeC(3); 500]);
        let (ptr, cap) = (a.as_ptr(), a.capacity());
        drop(a);
        let b = PooledVec::<ProbeC>::take();
        assert!(b.is_empty());
        assert_eq!((b.as_ptr(), b.capacity()), (ptr, cap));
        // Held by `b`: a second buffer is a new one.
        assert_eq!(PooledVec::<ProbeC>::take().capacity(), 0);
    }

    #[test]
    fn chunk_buffers_over_the_limit_are_not_kept() {
        let big = TYPED_MAX_ONE + 1;
        give_buffers(vec![Vec::with_capacity(big), Vec::with_capacity(1000)]);
        let got = take_buffers(POOL_MAX + 1);
        assert!(got.iter().all(|b| b.capacity() < big));
        assert!(got.iter().map(Vec::capacity).sum::<usize>() <= CHUNK_POOL_BYTES);
        give_buffers(got);
    }

    #[test]
    fn writer_buffers_are_kept_by_type_and_capped() {
        probe!(ProbeA);
        probe!(ProbeB);
        let fresh: Vec<ProbeA> = take_vec();
        assert_eq!(fresh.capacity(), 0);
        let mut v = fresh;
        v.extend([ProbeA(7); 1000]);
        let (ptr, cap) = (v.as_ptr(), v.capacity());
        give_vec(v);
        // Another element type never gets it.
        assert_eq!(take_vec::<ProbeB>().capacity(), 0);
        let back: Vec<ProbeA> = take_vec();
        assert!(back.is_empty());
        assert_eq!((back.as_ptr(), back.capacity()), (ptr, cap));
        // Taken once: the pool no longer holds it.
        assert_eq!(take_vec::<ProbeA>().capacity(), 0);

        // One buffer over TYPED_MAX_ONE is freed, not kept.
        give_vec(Vec::<ProbeA>::with_capacity(TYPED_MAX_ONE / 8 + 1));
        assert_eq!(take_vec::<ProbeA>().capacity(), 0);

        // Twelve 4 MiB buffers: at most 32 MiB of them stay, the newest.
        let each = (4 << 20) / 8;
        for _ in 0..12 {
            give_vec(Vec::<ProbeB>::with_capacity(each));
        }
        let mut kept = 0;
        while take_vec::<ProbeB>().capacity() >= each {
            kept += 1;
        }
        assert!((1..=TYPED_MAX_BYTES / (4 << 20)).contains(&kept), "{kept}");
    }
}
