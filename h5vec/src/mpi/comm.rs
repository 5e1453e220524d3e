//! What the ranks tell each other: row spans (exclusive scans of counts),
//! the check that every rank makes the same call, and one rank's failure
//! made every rank's error before anything collective follows.

use ::mpi::collective::{CommunicatorCollectives, SystemOperation};
use ::mpi::datatype::PartitionMut;
use ::mpi::topology::Communicator;
use ::mpi::Count;

use crate::error::{Error, Result};

/// A run of rows in one of the vector's row spaces (the vector's rows, a
/// list's values, a heap's bytes, one variant's rows): `start` rows were
/// committed before this call, this rank writes `local` rows from `base`,
/// and all ranks' rows end at `total`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Span {
    pub start: u64,
    pub base: u64,
    pub local: u64,
    pub total: u64,
}

/// The span of this rank's `local` rows after `start` committed ones, in
/// rank order. Collective.
pub(super) fn span<C: Communicator>(comm: &C, start: u64, local: u64, at: &str) -> Result<Span> {
    let mut before = 0u64;
    comm.exclusive_scan_into(&local, &mut before, SystemOperation::sum());
    // MPI leaves rank 0's result undefined.
    if comm.rank() == 0 {
        before = 0;
    }
    let mut sum = 0u64;
    comm.all_reduce_into(&local, &mut sum, SystemOperation::sum());
    // Every rank sees the same `sum` (hence the same verdict on it); a
    // rank's `before` is at most `sum`.
    let total = start
        .checked_add(sum)
        .ok_or_else(|| Error::invalid(at, "the ranks' rows overflow 64 bits"))?;
    Ok(Span {
        start,
        base: start + before.min(sum),
        local,
        total,
    })
}

/// The largest `n` over the ranks. Collective.
pub(super) fn max<C: Communicator>(comm: &C, n: u64) -> u64 {
    let mut m = 0u64;
    comm.all_reduce_into(&n, &mut m, SystemOperation::max());
    m
}

/// The bitwise or of `bits` over the ranks. Collective.
pub(super) fn bit_or<C: Communicator>(comm: &C, bits: u64) -> u64 {
    let mut m = 0u64;
    comm.all_reduce_into(&bits, &mut m, SystemOperation::bitwise_or());
    m
}

/// Every rank's `text`, in rank order. Collective.
pub(super) fn gather_text<C: Communicator>(comm: &C, text: &str) -> Vec<String> {
    // Texts here are a call's description or an error message: short. One
    // byte ahead of each, so that no rank sends nothing (MPI refuses a
    // gather of no bytes at all).
    let mut bytes = vec![b'|'];
    bytes.extend_from_slice(&text.as_bytes()[..text.len().min(1 << 20)]);
    let len = bytes.len() as Count;
    let mut counts = vec![0 as Count; comm.size() as usize];
    comm.all_gather_into(&len, &mut counts[..]);
    let mut displs = Vec::with_capacity(counts.len());
    let mut total: Count = 0;
    for &c in &counts {
        displs.push(total);
        total = total.saturating_add(c);
    }
    let mut buf = vec![0u8; total.max(0) as usize];
    {
        let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
        comm.all_gather_varcount_into(&bytes[..], &mut part);
    }
    counts
        .iter()
        .zip(&displs)
        .map(|(&c, &d)| {
            let (a, b) = (d as usize + 1, (d + c) as usize);
            String::from_utf8_lossy(buf.get(a..b).unwrap_or_default()).into_owned()
        })
        .collect()
}

/// `r` on this rank, or, when any rank failed, an error on every rank:
/// a failed rank keeps its own error, the others get one naming each rank
/// that failed and why. Collective: the ranks must agree before any
/// collective HDF5 call, or the ones that went on would wait forever for
/// the one that stopped.
pub(super) fn all_ok<C: Communicator, X>(comm: &C, r: Result<X>, what: &str) -> Result<X> {
    let failed = u64::from(r.is_err());
    if max(comm, failed) == 0 {
        return r;
    }
    let msg = match &r {
        Ok(_) => String::new(),
        Err(e) => e.to_string(),
    };
    let msgs = gather_text(comm, &msg);
    r?;
    let said: Vec<String> = msgs
        .iter()
        .enumerate()
        .filter(|(_, m)| !m.is_empty())
        .map(|(rank, m)| format!("rank {rank}: {m}"))
        .collect();
    Err(Error::invalid(
        what,
        format!(
            "another rank failed, so this call committed nothing: {}",
            said.join("; ")
        ),
    ))
}

/// Checks that every rank makes the same call: `call` describes it (the
/// function, the vector's name, the Rust type, its stored schema and the
/// options that shape the layout). On a difference every rank gets the
/// same error, listing the ranks whose call differs from rank 0's.
/// Collective.
pub(super) fn agree<C: Communicator>(comm: &C, call: &str, what: &str) -> Result<()> {
    let digest = fnv1a(call.as_bytes());
    let mut digests = vec![0u64; comm.size() as usize];
    comm.all_gather_into(&digest, &mut digests[..]);
    if digests.iter().all(|&d| d == digests[0]) {
        return Ok(());
    }
    let calls = gather_text(comm, call);
    let differ: Vec<String> = calls
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, c)| **c != calls[0])
        .map(|(rank, c)| format!("rank {rank} called {c}"))
        .collect();
    Err(Error::mismatch(
        what,
        format!("every rank to make rank 0's call, {}", calls[0]),
        differ.join("; "),
    ))
}

/// FNV-1a, 64 bits: the same digest in every process (std's hashers are
/// not promised to be).
pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
