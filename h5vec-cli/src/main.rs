//! `h5vec`: look inside, check, repair and convert h5vec vectors, h5col
//! tables and VLS string arrays without their Rust types (README.md).
//!
//! Exit status: 0 on success, 1 when `validate` found problems, 2 on a usage
//! or I/O error (clap's own usage errors exit 2 too). Errors are one line on
//! stderr, `h5vec: <message>`, with the file, the container and the field
//! path.

mod cli;
mod columns;
mod convert;
mod index;
mod info;
mod ls;
mod many;
mod output;
mod parquet_out;
mod present;
mod progress;
mod query;
mod read;
mod repair;
mod schema;
mod show;
mod target;
mod text;
mod validate;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};
use validate::Outcome;

fn run(cli: Cli) -> anyhow::Result<Outcome> {
    match cli.command {
        Command::Ls { args } => ls::run_args(&args),
        Command::Schema { file, vector, json } => schema::run(&file, &vector, json),
        Command::Info { files, vector } => info::run_args(&files, &vector),
        Command::Head {
            files,
            vector,
            n,
            show,
        } => show::head(&files, &vector, n, &show),
        Command::Cat {
            files,
            vector,
            rows,
            show,
        } => show::cat(&files, &vector, rows, &show),
        Command::Count {
            files,
            vector,
            filter,
        } if many::is_many(&files) => many::count(&files, &vector, filter.as_deref()),
        Command::Count {
            files,
            vector,
            filter,
        } => query::count(&files[0], &vector, filter.as_deref()),
        Command::Explain {
            file,
            vector,
            filter,
        } => query::explain(&file, &vector, &filter),
        Command::Rows {
            files,
            vector,
            filter,
        } if many::is_many(&files) => many::rows(&files, &vector, &filter),
        Command::Rows {
            files,
            vector,
            filter,
        } => query::rows(&files[0], &vector, &filter),
        Command::Index {
            file,
            vector,
            column,
            kind,
            drop,
        } => index::run(
            &file,
            &vector,
            match (&column, drop) {
                (None, _) => index::Action::List,
                (Some(c), false) => index::Action::Build { column: c, kind },
                (Some(c), true) => index::Action::Drop { column: c, kind },
            },
        ),
        Command::Validate {
            file,
            vector,
            options,
        } => return validate::run(&file, vector.as_deref(), &options),
        Command::Convert {
            src,
            dst,
            compression,
            chunk_length,
            replace,
            vls_strings,
            checksum,
            columns,
            filter,
        } => convert::run(
            &src,
            &dst,
            &convert::Options {
                compression,
                chunk_length,
                replace,
                vls_strings,
                checksum,
                columns,
                filter,
            },
        ),
        Command::Repair { file, vector } => repair::run(&file, &vector),
    }?;
    Ok(Outcome::Ok)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Problems) => ExitCode::from(1),
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("h5vec: {}", message(&err));
            ExitCode::from(2)
        }
    }
}

/// The error and its causes on one line, `a: b: c`, each text once: a cause
/// whose text its error already shows (an `h5vec::Error` shows the HDF5
/// error it holds as its source) is not repeated.
fn message(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for e in err.chain() {
        let text = e.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// Output cut short by its reader (`h5vec cat ... | head`): not an error.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    output::stdout_closed()
        || err.chain().any(|e| {
            e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
                || e.downcast_ref::<serde_json::Error>()
                    .is_some_and(|e| e.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe))
                || e.downcast_ref::<arrow::error::ArrowError>()
                    .is_some_and(|e| match e {
                        arrow::error::ArrowError::IoError(_, e) => {
                            e.kind() == std::io::ErrorKind::BrokenPipe
                        }
                        _ => false,
                    })
        })
}
