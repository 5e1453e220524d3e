//! `validate FILE [VECTOR]`: every row of every container read with the
//! checks of a typed load (SPEC.md section 7); one line per problem. The
//! reading runs in a child process (`h5vec::check_isolated`), so a file
//! that crashes or hangs HDF5 is one more problem line; `--in-process`
//! reads in the command's own process (with progress), for debugging.

use std::path::Path;

use anyhow::Result;
use h5vec::ErrorKind;

use crate::progress::Progress;
use crate::target::{open_read, split, Target, BATCH_ROWS};

/// What a command that ran to its end found (`validate` is the one
/// command with problems to report).
pub(crate) enum Outcome {
    /// Done, nothing to report.
    Ok,
    /// `validate` reported problems.
    Problems,
}

/// How `validate` reads: the options of the subcommand.
#[derive(clap::Args, Debug)]
pub(crate) struct ValidateOptions {
    /// Read in this process instead of a child process: a file that
    /// crashes HDF5 then ends the command (for debugging the check).
    #[arg(long)]
    in_process: bool,
    /// Also append the last row of every vector to a copy of the file
    /// (some damage shows only when HDF5 writes).
    #[arg(long, conflicts_with = "in_process")]
    appends: bool,
    /// Seconds the check of a file may take (default 60).
    #[arg(long, value_name = "SECONDS", conflicts_with = "in_process")]
    time_limit: Option<f64>,
    /// Memory the check may allocate, in MiB (default 2048).
    #[arg(long, value_name = "MIB", conflicts_with = "in_process")]
    memory_limit: Option<u64>,
}

/// Checks `file` in a child process ([`h5vec::check_isolated`]) and prints
/// `FILE:/path: <error>` for each container that fails; a check that
/// cannot finish (the child crashed, ran out of time or memory) prints
/// `FILE: <error>`, one line. An error the check itself reports (the file
/// is not HDF5) is the command's error, as in this process. With
/// `--in-process`, [`in_process`]. [`Outcome::Problems`] if anything was
/// printed; a named vector that does not exist is an error, not a problem.
pub(crate) fn run(file: &Path, vector: Option<&str>, options: &ValidateOptions) -> Result<Outcome> {
    // No child processes outside Unix: the check runs here.
    if options.in_process || cfg!(not(unix)) {
        return in_process(file, vector);
    }
    isolated(file, vector, options)
}

/// [`run`] in a child process.
#[cfg(unix)]
fn isolated(file: &Path, vector: Option<&str>, options: &ValidateOptions) -> Result<Outcome> {
    use anyhow::Context;

    use std::io::Write;
    use std::time::Duration;
    let meta =
        std::fs::metadata(file).with_context(|| format!("cannot open {}", file.display()))?;
    if meta.is_dir() {
        anyhow::bail!("cannot open {}: it is a directory", file.display());
    }
    let mut isolation = h5vec::Isolation::default().appends(options.appends);
    if let Some(s) = options.time_limit {
        let limit = Duration::try_from_secs_f64(s)
            .map_err(|_| anyhow::anyhow!("--time-limit: {s} is not a number of seconds"))?;
        isolation = isolation.time_limit(limit);
    }
    if let Some(mib) = options.memory_limit {
        isolation = isolation.memory_limit(mib.saturating_mul(1 << 20));
    }
    // `a//b/` -> `/a/b`, as the other subcommands take paths.
    let vector = vector.map(|v| {
        let parts: Vec<&str> = v.split('/').filter(|p| !p.is_empty()).collect();
        format!("/{}", parts.join("/"))
    });
    if let Some(v) = &vector {
        isolation = isolation.only(v);
    }
    let mut out = std::io::stdout().lock();
    let problems = match h5vec::check_isolated(file, &isolation) {
        Ok(found) => {
            let mut n = 0;
            for c in found {
                if let Some(p) = c.problem {
                    n += 1;
                    writeln!(out, "{}:{}: {p}", file.display(), c.path)?;
                }
            }
            n
        }
        Err(e) if matches!(e.kind(), ErrorKind::NotFound(_)) && vector.is_some() => {
            anyhow::bail!(
                "{}:{}: no vector, h5col table or VLS array there",
                file.display(),
                vector.unwrap_or_default()
            )
        }
        Err(e) => {
            // An error of the file itself (a crash, the time limit, not
            // HDF5) is at the file: its message alone after the file's name.
            let own = e.path() == "$" && e.location() == Some(&*file.display().to_string());
            let text = match e.kind() {
                ErrorKind::Invalid(m) if own => m.clone(),
                ErrorKind::Hdf5(h) if own => h.to_string(),
                _ => e.to_string(),
            };
            // The child crashed, hung or ran out of memory: a problem of
            // the file. Any other error is what reading in this process
            // would have given (not HDF5, a group HDF5 cannot list).
            if !text.starts_with("isolated check") {
                anyhow::bail!("{text}");
            }
            writeln!(out, "{}: {text}", file.display())?;
            1
        }
    };
    Ok(if problems > 0 {
        Outcome::Problems
    } else {
        Outcome::Ok
    })
}

#[cfg(not(unix))]
fn isolated(_: &Path, _: Option<&str>, _: &ValidateOptions) -> Result<Outcome> {
    unreachable!("run checks in process outside Unix")
}

/// Reads every container below the root (or only `vector`) batch by batch
/// through `h5vec::arrow::batches` in this process, and prints
/// `FILE:/path: <error>` for each that fails (its first error: the rest of
/// it is not read). A container that cannot even be described (`ls` shows
/// it with its problem) is a problem too. [`Outcome::Problems`] if anything
/// was printed; a named vector that does not exist is an error, not a problem.
fn in_process(file: &Path, vector: Option<&str>) -> Result<Outcome> {
    let h5 = open_read(file)?;
    let containers: Vec<(String, Option<String>, u64)> = match vector {
        Some(v) => {
            let t = Target::open(&h5, v)?;
            if !t.parent.link_exists(&t.name) {
                anyhow::bail!(
                    "{}:{}: no vector, h5col table or VLS array there",
                    file.display(),
                    t.path
                );
            }
            vec![(t.path, None, 0)]
        }
        None => h5vec::find_containers(&h5.as_group()?)?
            .into_iter()
            .map(|c| (c.path, c.problem, c.rows))
            .collect(),
    };
    let total = containers.iter().fold(0u64, |a, c| a.saturating_add(c.2));
    let progress = Progress::new(Some(total), "validating");
    let mut problems = 0u64;
    for (path, problem, _) in &containers {
        let found = match problem {
            Some(p) => Some(p.clone()),
            None => check(&h5, path, &progress)?,
        };
        if let Some(message) = found {
            problems += 1;
            progress.println(&format!("{}:{path}: {message}", file.display()))?;
        }
    }
    progress.finish();
    Ok(if problems > 0 {
        Outcome::Problems
    } else {
        Outcome::Ok
    })
}

/// The first error reading every row of the container at `path`, if any.
/// Errors of the file itself (a group that cannot be opened) end the run.
fn check(h5: &h5vec::hdf5::File, path: &str, progress: &Progress) -> Result<Option<String>> {
    let (parent, name) = split(path)?;
    let parent = crate::target::group(h5, &parent)?;
    let batches = match h5vec::arrow::batches(&parent, &name, BATCH_ROWS) {
        Ok(b) => b,
        Err(e) if matches!(e.kind(), ErrorKind::NotFound(_)) => return Err(e.into()),
        Err(e) => return Ok(Some(e.to_string())),
    };
    for batch in batches {
        match batch {
            Ok(b) => progress.add(b.num_rows() as u64),
            Err(e) => return Ok(Some(e.to_string())),
        }
    }
    Ok(None)
}
