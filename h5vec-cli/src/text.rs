//! Plain aligned text for `ls`, `schema` and `info`: columns separated by two
//! spaces, numbers right-aligned, no trailing blanks.

use std::fmt::Write as _;

/// Rows of cells under a header; `right[i]` right-aligns column `i`.
pub(crate) struct Columns {
    header: Vec<&'static str>,
    right: Vec<bool>,
    rows: Vec<Vec<String>>,
}

impl Columns {
    pub(crate) fn new(header: &[(&'static str, bool)]) -> Columns {
        Columns {
            header: header.iter().map(|(h, _)| *h).collect(),
            right: header.iter().map(|(_, r)| *r).collect(),
            rows: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// The header and the rows, one line each (ending in a newline); columns
    /// empty in every row are left out.
    pub(crate) fn render(&self) -> String {
        let n = self.header.len();
        let used: Vec<bool> = (0..n)
            .map(|i| {
                i == 0
                    || self
                        .rows
                        .iter()
                        .any(|r| r.get(i).is_some_and(|c| !c.is_empty()))
            })
            .collect();
        let width = |i: usize| {
            self.rows
                .iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .chain([self.header[i].chars().count()])
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..n).map(width).collect();
        let mut out = String::new();
        let header: Vec<String> = self.header.iter().map(|h| h.to_string()).collect();
        for row in std::iter::once(&header).chain(&self.rows) {
            let mut line = String::new();
            for i in (0..n).filter(|&i| used[i]) {
                let cell = row.get(i).map_or("", String::as_str);
                if !line.is_empty() {
                    line.push_str("  ");
                }
                let pad = widths[i].saturating_sub(cell.chars().count());
                if self.right[i] {
                    line.extend(std::iter::repeat_n(' ', pad));
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
        out
    }
}

/// `512 B`, `1.5 KiB`, `12.0 MiB`, ...
pub(crate) fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(3 << 20), "3.0 MiB");
        assert_eq!(bytes(u64::MAX), "16.0 EiB");
    }

    #[test]
    fn aligned_columns() {
        let mut c = Columns::new(&[("NAME", false), ("N", true), ("EMPTY", false)]);
        c.push(vec!["a".into(), "100".into(), String::new()]);
        c.push(vec!["long name".into(), "2".into(), String::new()]);
        assert_eq!(
            c.render(),
            "NAME         N\na          100\nlong name    2\n"
        );
    }
}
