//! A progress bar on stderr for long operations (`convert`, `validate`),
//! drawn only when stderr is a terminal: piped or redirected, the command
//! prints nothing but its output and its errors.

use std::io::{IsTerminal, Write};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Rows done out of a known total; does nothing when stderr is not a
/// terminal.
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar for `total` rows (a counter when the total is not known),
    /// labelled `what`.
    pub(crate) fn new(total: Option<u64>, what: &'static str) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
        let template = if total.is_some() {
            "{msg} {wide_bar} {human_pos}/{human_len} rows ({elapsed}, {eta} left)"
        } else {
            "{msg} {human_pos} rows ({elapsed})"
        };
        let style =
            ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.set_message(what);
        Progress { bar: Some(bar) }
    }

    /// A bar counting `total` files, labelled `what`.
    pub(crate) fn files(total: u64, what: &'static str) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(
            "{msg} {wide_bar} {pos}/{len} files ({elapsed}, {eta} left)",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.set_message(what);
        Progress { bar: Some(bar) }
    }

    /// No bar.
    pub(crate) fn hidden() -> Progress {
        Progress { bar: None }
    }

    /// `rows` more rows are done.
    pub(crate) fn add(&self, rows: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(rows);
        }
    }

    /// Prints `line` above the bar (or on stdout when there is none): what
    /// `validate` reports while it runs.
    pub(crate) fn println(&self, line: &str) -> std::io::Result<()> {
        let print = || writeln!(std::io::stdout().lock(), "{line}");
        match &self.bar {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }

    /// Removes the bar.
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
