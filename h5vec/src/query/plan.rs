//! The scan behind every query: the rows cut into windows (the chunk
//! length of the columns with statistics), each window's chance of a match
//! decided from the statistics alone ([`may`]: can it hold a row where the
//! filter is true?), the windows that may read and evaluated in runs, and
//! what was done reported by [`Explain`].

use std::cmp::Ordering;
use std::fmt;
use std::ops::Range;

use hdf5::Group;

use super::eval::{compile, truth, Node};
use super::filter::{CmpOp, Filter};
use super::index::{self, Answer};
use super::leaf::Leaf;
use super::lit::{cmp_int_float, Lit, Pred, T};
use super::stats;
use crate::containers::{classify, ContainerKind};
use crate::error::{Error, Result};
use crate::guard::{Access, Walked};
use crate::raw::bounds::{Bound, BoundKind};
use crate::raw::minmax::Entry;
use crate::vector::open::Opened;
use crate::vector::open_vector;

/// Statistics of one leaf over a window: bounds of its ordered values,
/// and its NaN, missing and row counts.
#[derive(Clone, Copy)]
struct Window {
    bounds: Option<(Bound, Bound)>,
    nan: u64,
    fill: u64,
    n: u64,
}

/// One leaf's valid statistics.
struct LeafStats {
    entries: Vec<Entry>,
    chunk: u64,
    kind: BoundKind,
}

impl LeafStats {
    /// The statistics of rows `rows` (entries overlapping them merged).
    fn window(&self, rows: &Range<u64>) -> Window {
        let a = (rows.start / self.chunk) as usize;
        let b = (rows.end.div_ceil(self.chunk) as usize).min(self.entries.len());
        let mut w = Window {
            bounds: None,
            nan: 0,
            fill: 0,
            n: 0,
        };
        for e in &self.entries[a.min(b)..b] {
            w.nan += e.nan_count;
            w.fill += e.fill_count;
            w.n += e.n;
            if e.nan_count + e.fill_count < e.n {
                let (lo, hi) = e.bounds(self.kind);
                w.bounds = Some(match w.bounds {
                    Some((l, h)) => (l.min(lo), h.max(hi)),
                    None => (lo, hi),
                });
            }
        }
        w
    }
}

/// A bound against a literal, exactly (`None`: not comparable).
fn cmp_bound(b: Bound, l: &Lit) -> Option<Ordering> {
    let i = match b {
        Bound::I(v) => i128::from(v),
        Bound::U(v) => i128::from(v),
        Bound::B(v) => i128::from(v),
        Bound::F(x) => {
            return match l {
                Lit::F(y) => x.partial_cmp(y),
                Lit::I(i) => Some(cmp_int_float(*i, x).reverse()),
                _ => None,
            }
        }
    };
    match l {
        Lit::I(j) => Some(i.cmp(j)),
        Lit::F(y) => Some(cmp_int_float(i, *y)),
        _ => None,
    }
}

/// Whether some value in `[lo, hi]` may satisfy `p`, and whether some may
/// not (`p` a value predicate).
fn interval(p: &Pred, lo: Bound, hi: Bound) -> (bool, bool) {
    use Ordering::*;
    let c = |b: Bound, l: &Lit| cmp_bound(b, l);
    let may_eq = |l: &Lit| match l {
        Lit::Nothing => false,
        l => c(lo, l) != Some(Greater) && c(hi, l) != Some(Less),
    };
    let all_eq = |l: &Lit| c(lo, l) == Some(Equal) && c(hi, l) == Some(Equal);
    match p {
        Pred::Cmp(CmpOp::Eq | CmpOp::Ne, l) => (may_eq(l), !all_eq(l)),
        Pred::Cmp(CmpOp::Lt, l) => (
            c(lo, l) != Some(Greater) && c(lo, l) != Some(Equal),
            c(hi, l) != Some(Less),
        ),
        Pred::Cmp(CmpOp::Le, l) => (
            c(lo, l) != Some(Greater),
            c(hi, l) != Some(Less) && c(hi, l) != Some(Equal),
        ),
        Pred::Cmp(CmpOp::Gt, l) => (
            c(hi, l) != Some(Less) && c(hi, l) != Some(Equal),
            c(lo, l) != Some(Greater),
        ),
        Pred::Cmp(CmpOp::Ge, l) => (
            c(hi, l) != Some(Less),
            c(lo, l) != Some(Greater) && c(lo, l) != Some(Equal),
        ),
        Pred::Between(a, b) => (
            c(lo, b) != Some(Greater) && c(hi, a) != Some(Less),
            c(lo, a) == Some(Less) || c(hi, b) == Some(Greater) || c(lo, a).is_none(),
        ),
        Pred::In(ls) => (ls.iter().any(may_eq), !ls.iter().any(all_eq)),
        Pred::Null(_) => (true, true),
    }
}

/// Whether the window may hold a row where leaf `i`'s predicate `p` is
/// true, and one where it is false, from its statistics.
fn may_leaf(i: usize, p: &Pred, w: &[Option<Window>]) -> (bool, bool) {
    let Some(s) = w[i] else {
        return (true, true);
    };
    match p {
        Pred::Null(null) => {
            let (some_null, some_present) = (s.fill > 0, s.fill < s.n);
            if *null {
                (some_null, some_present)
            } else {
                (some_present, some_null)
            }
        }
        _ => match s.bounds {
            // NaN rows are false for every value predicate.
            Some((lo, hi)) => {
                let (t, f) = interval(p, lo, hi);
                (t, f || s.nan > 0)
            }
            None => (false, s.nan > 0),
        },
    }
}

/// Whether the window `rows` may hold a row where `node` is true, and one
/// where it is false, from the statistics and the search indexes alone
/// (leaves without either: both).
fn may(node: &Node, w: &[Option<Window>], answers: &[Answer], rows: &Range<u64>) -> (bool, bool) {
    match node {
        Node::Leaf(i, p) => may_leaf(*i, p, w),
        Node::Indexed(k) => {
            let a = &answers[*k];
            let (t, f) = may_leaf(a.leaf, &a.pred, w);
            let (it, i_f) = a.may(rows);
            (t && it, f && i_f)
        }
        Node::And(a, b) => {
            let (x, y) = (may(a, w, answers, rows), may(b, w, answers, rows));
            (x.0 && y.0, x.1 || y.1)
        }
        Node::Or(a, b) => {
            let (x, y) = (may(a, w, answers, rows), may(b, w, answers, rows));
            (x.0 || y.0, x.1 && y.1)
        }
        Node::Not(a) => {
            let (t, f) = may(a, w, answers, rows);
            (f, t)
        }
    }
}

/// `node` with each value predicate a valid search index of its leaf
/// answers replaced by [`Node::Indexed`] (`neg`: under an odd number of
/// `not`, where the index must also say which rows are unknown).
fn with_indexes(
    node: Node,
    ix: &[index::LeafIndexes],
    leaves: &mut [Leaf],
    count: u64,
    answers: &mut Vec<Answer>,
    neg: bool,
) -> Result<Node> {
    Ok(match node {
        Node::Leaf(i, p) => match index::answer(&ix[i], &mut leaves[i], i, &p, count, neg)? {
            Some(a) => {
                answers.push(a);
                Node::Indexed(answers.len() - 1)
            }
            None => Node::Leaf(i, p),
        },
        Node::And(a, b) => Node::And(
            Box::new(with_indexes(*a, ix, leaves, count, answers, neg)?),
            Box::new(with_indexes(*b, ix, leaves, count, answers, neg)?),
        ),
        Node::Or(a, b) => Node::Or(
            Box::new(with_indexes(*a, ix, leaves, count, answers, neg)?),
            Box::new(with_indexes(*b, ix, leaves, count, answers, neg)?),
        ),
        Node::Not(a) => Node::Not(Box::new(with_indexes(
            *a, ix, leaves, count, answers, !neg,
        )?)),
        n @ Node::Indexed(_) => n,
    })
}

/// A query being answered on one vector.
pub(crate) struct Scan {
    leaves: Vec<Leaf>,
    node: Node,
    /// What search indexes say about the predicates of `Node::Indexed`.
    answers: Vec<Answer>,
    count: u64,
    stats: Vec<Option<LeafStats>>,
    window: u64,
    windows: u64,
    read: u64,
    /// Keeps the vector or table open (the vector is what `load_where`
    /// decodes).
    _v: Keep,
}

/// What a scan keeps open.
enum Keep {
    Vector(Box<Opened>),
    /// An h5col table (SPEC.md section 14.7), its walk held.
    Table {
        table: Group,
        _walked: Walked,
    },
}

impl Scan {
    /// Opens vector or h5col table `name` and compiles `filter` against
    /// its columns.
    pub(crate) fn open(group: &Group, name: &str, filter: &Filter) -> Result<Scan> {
        if classify(group, name) == Some(ContainerKind::Table) {
            return Self::open_table(group, name, filter);
        }
        let v = open_vector(group, name, Access::Read)?;
        let mut leaves = Vec::new();
        let node = compile(&filter.0, &mut leaves, &mut |c| {
            Leaf::open(&v.data, &v.schema, c, v.count)
        })?;
        let mut st = Vec::new();
        for l in &leaves {
            // Under an `Option` too: statistics built on request count its
            // nulls as missing rows (`fill_count`).
            let s = match l.dataset().or_else(|| l.values_dataset()) {
                Some(ds) => stats::read_minmax(&v.meta, ds, &l.source, v.count)?.map(
                    |(entries, chunk, kind)| LeafStats {
                        entries,
                        chunk,
                        kind,
                    },
                ),
                None => None,
            };
            st.push(s);
        }
        let ix = index::find(&v.meta, &leaves, v.count)?;
        let mut answers = Vec::new();
        let node = with_indexes(node, &ix, &mut leaves, v.count, &mut answers, false)?;
        Ok(Scan::with(
            leaves,
            node,
            v.count,
            st,
            answers,
            Keep::Vector(Box::new(v)),
        ))
    }

    /// Opens h5col table `name`: its columns are the leaves, the valid
    /// `CHUNK_MINMAX` indexes of their datasets the statistics.
    fn open_table(group: &Group, name: &str, filter: &Filter) -> Result<Scan> {
        let (table, walked, nrows) = crate::h5col::open_checked(group, name, Access::Read)?;
        let mut leaves = Vec::new();
        let node = compile(&filter.0, &mut leaves, &mut |c| {
            Leaf::open_table(&table, c, nrows)
        })?;
        let st = leaves
            .iter()
            .map(|l| {
                let ds = l.dataset()?;
                let (entries, chunk, kind) = super::tables::table_minmax(&table, ds, nrows)?;
                Some(LeafStats {
                    entries,
                    chunk,
                    kind,
                })
            })
            .collect();
        let ix = index::find_table(&table, &leaves, nrows)?;
        let mut answers = Vec::new();
        let node = with_indexes(node, &ix, &mut leaves, nrows, &mut answers, false)?;
        Ok(Scan::with(
            leaves,
            node,
            nrows,
            st,
            answers,
            Keep::Table {
                table,
                _walked: walked,
            },
        ))
    }

    /// The scan of `count` rows with its leaves and their statistics.
    fn with(
        leaves: Vec<Leaf>,
        node: Node,
        count: u64,
        st: Vec<Option<LeafStats>>,
        answers: Vec<Answer>,
        keep: Keep,
    ) -> Scan {
        // Windows of the statistics' chunks, else of the Bloom filters'.
        let window = st
            .iter()
            .flatten()
            .map(|s| s.chunk)
            .max()
            .or_else(|| answers.iter().filter_map(Answer::chunk_len).max())
            .unwrap_or(crate::options::READ_BATCH_ROWS)
            .max(1);
        Scan {
            leaves,
            node,
            answers,
            count,
            stats: st,
            window,
            windows: 0,
            read: 0,
            _v: keep,
        }
    }

    /// Calls `each` with the matching rows of each window read, in order.
    pub(crate) fn run(
        &mut self,
        mut each: impl FnMut(&mut dyn Iterator<Item = u64>),
    ) -> Result<()> {
        let w = self.window;
        let batch = crate::options::READ_BATCH_ROWS.max(w);
        let mut a = 0u64;
        let mut run: Option<Range<u64>> = None;
        let mut flush = |r: Range<u64>, s: &mut Scan| -> Result<()> {
            let t = truth(&s.node, &mut s.leaves, &s.answers, r.clone())?;
            let mut it = t
                .iter()
                .enumerate()
                .filter(|(_, &x)| x == T)
                .map(|(i, _)| r.start + i as u64);
            each(&mut it);
            Ok(())
        };
        while a < self.count {
            let b = (a + w).min(self.count);
            self.windows += 1;
            let ws: Vec<Option<Window>> = self
                .stats
                .iter()
                .map(|s| s.as_ref().map(|s| s.window(&(a..b))))
                .collect();
            let (can, _) = may(&self.node, &ws, &self.answers, &(a..b));
            if can {
                self.read += 1;
                run = match run {
                    Some(r) if r.end == a && b - r.start <= batch => Some(r.start..b),
                    Some(r) => {
                        flush(r, self)?;
                        Some(a..b)
                    }
                    None => Some(a..b),
                };
            } else if let Some(r) = run.take() {
                flush(r, self)?;
            }
            a = b;
        }
        if let Some(r) = run {
            flush(r, self)?;
        }
        Ok(())
    }

    /// The vector's rows.
    pub(crate) fn rows(&self) -> u64 {
        self.count
    }

    /// The vector, opened and checked (an h5col table: an error, its rows
    /// are read by `h5col::load_table_where`).
    pub(crate) fn vector(&self) -> Result<&Opened> {
        match &self._v {
            Keep::Vector(v) => Ok(v),
            Keep::Table { table, .. } => Err(Error::mismatch(
                crate::h5col::table_place(table),
                "a vector (load the rows of an h5col table with h5vec::h5col::load_table_where)",
                "an h5col table",
            )),
        }
    }

    /// The report of what [`Self::run`] did, `rows` rows matching.
    pub(crate) fn explain(&self, rows: u64) -> Explain {
        Explain {
            columns: self
                .leaves
                .iter()
                .zip(&self.stats)
                .enumerate()
                .map(|(i, (l, s))| {
                    let mut used: Vec<String> = Vec::new();
                    for a in self.answers.iter().filter(|a| a.leaf == i) {
                        if !used.contains(&a.label) {
                            used.push(a.label.clone());
                        }
                    }
                    if let Some(s) = s {
                        used.push(format!("CHUNK_MINMAX ({} entries)", s.entries.len()));
                    }
                    ExplainColumn {
                        column: l.column.clone(),
                        path: l.path.clone(),
                        index: (!used.is_empty()).then(|| used.join(", ")),
                    }
                })
                .collect(),
            rows: self.count,
            window_rows: self.window,
            windows: self.windows,
            windows_read: self.read,
            matched: rows,
        }
    }
}

/// What a query did ([`explain`](crate::explain)): per column, the index
/// it used; the windows of rows the scan read and skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explain {
    columns: Vec<ExplainColumn>,
    rows: u64,
    window_rows: u64,
    windows: u64,
    windows_read: u64,
    matched: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct ExplainColumn {
    column: String,
    path: String,
    index: Option<String>,
}

impl Explain {
    /// Windows of rows the vector was cut into.
    pub fn windows(&self) -> u64 {
        self.windows
    }

    /// Windows read (the others were skipped by statistics).
    pub fn windows_read(&self) -> u64 {
        self.windows_read
    }

    /// Rows that matched.
    pub fn rows_matched(&self) -> u64 {
        self.matched
    }

    /// The index each column used (`None`: a scan), by column.
    pub fn indexes(&self) -> Vec<(&str, Option<&str>)> {
        self.columns
            .iter()
            .map(|c| (c.column.as_str(), c.index.as_deref()))
            .collect()
    }
}

impl fmt::Display for Explain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "rows: {}, matched: {}", self.rows, self.matched)?;
        for c in &self.columns {
            match &c.index {
                Some(i) => writeln!(f, "  {} ({}): {i}", c.column, c.path)?,
                None => writeln!(f, "  {} ({}): scan, no valid statistics", c.column, c.path)?,
            }
        }
        write!(
            f,
            "windows of {} rows: {} read, {} skipped of {}",
            self.window_rows,
            self.windows_read,
            self.windows - self.windows_read,
            self.windows
        )
    }
}
