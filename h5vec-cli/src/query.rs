//! `--where FILTER` (of `head`, `cat`, `convert`, `count`, `explain`,
//! `rows`): the text parsed into an `h5vec::Filter` (SPEC.md section
//! 14.2); `count`, `explain` and `rows`, on vectors and h5col tables.

use std::io::Write;
use std::path::Path;

use anyhow::{anyhow, Context, Result};
use h5vec::{ContainerKind, ErrorKind, Filter};

use crate::target::{open_read, Target};

/// The filter written `text`, or the parser's message: `--where: at N:
/// what was expected` (N the character position from 1).
pub(crate) fn parse_where(text: &str) -> Result<Filter> {
    text.parse::<Filter>().map_err(|e| match e.kind() {
        // The parser's message says `--where` and where in the text.
        ErrorKind::Invalid(m) => anyhow!("{m}"),
        _ => anyhow!("--where: {e}"),
    })
}

/// The error of a query on `target`: for a VLS array (which this version
/// cannot query), a sentence saying so instead of the vector checks'
/// message about its members.
pub(crate) fn query_error(target: &Target, err: h5vec::Error) -> anyhow::Error {
    match h5vec::inspect(&target.parent, &target.name) {
        Ok(info) if info.container == ContainerKind::VlsArray => anyhow!(
            "--where reads vectors and h5col tables only, and this is a {} (queries on VLS \
             arrays are not in this version)",
            info.container
        ),
        _ => err.into(),
    }
}

/// `count`: the rows of `vector` in `file` (all of them, or those where
/// `filter` is true), printed as one number.
pub(crate) fn count(file: &Path, vector: &str, filter: Option<&str>) -> Result<()> {
    let filter = filter.map(parse_where).transpose()?;
    let h5 = open_read(file)?;
    let target = Target::open(&h5, vector)?;
    let at = || format!("{}:{}", file.display(), target.path);
    let n = match &filter {
        // Opening checks the container (SPEC.md section 7); no row is read.
        None => h5vec::arrow::batches(&target.parent, &target.name, 1)
            .with_context(at)?
            .rows(),
        Some(f) => h5vec::count_where(&target.parent, &target.name, f)
            .map_err(|e| query_error(&target, e))
            .with_context(at)?,
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "{n}")?;
    out.flush()?;
    Ok(())
}

/// `explain`: how `filter` is answered on `vector` in `file` (the report of
/// `h5vec::explain`).
pub(crate) fn explain(file: &Path, vector: &str, filter: &str) -> Result<()> {
    let filter = parse_where(filter)?;
    let h5 = open_read(file)?;
    let target = Target::open(&h5, vector)?;
    let at = || format!("{}:{}", file.display(), target.path);
    let report = h5vec::explain(&target.parent, &target.name, &filter)
        .map_err(|e| query_error(&target, e))
        .with_context(at)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{report}")?;
    out.flush()?;
    Ok(())
}

/// `rows`: the numbers of the rows of `name` in `file` (a vector or an
/// h5col table) where `filter` is true, one a line, in increasing order.
pub(crate) fn rows(file: &Path, name: &str, filter: &str) -> Result<()> {
    let filter = parse_where(filter)?;
    let h5 = open_read(file)?;
    let target = Target::open(&h5, name)?;
    let at = || format!("{}:{}", file.display(), target.path);
    let rows = h5vec::select_rows(&target.parent, &target.name, &filter)
        .map_err(|e| query_error(&target, e))
        .with_context(at)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for r in rows {
        writeln!(out, "{r}")?;
    }
    out.flush()?;
    Ok(())
}
