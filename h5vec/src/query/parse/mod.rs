//! The `--where` text syntax of a [`Filter`](super::Filter): its parser
//! (`FromStr`, grammar on that impl) and its printer (`Display`), which
//! round-trip (`f.to_string().parse() == Ok(f)`, times of day, dates and
//! instants aside: they print as strings), and the hand-written calendar
//! arithmetic that prints instants and dates without chrono. This file
//! holds the parser; `display.rs` the printer; `tests.rs` their tests.

use std::fmt;
use std::str::FromStr;

use super::filter::{CmpOp, Expr, Filter, Value};
use crate::error::Error;

mod display;

const NS_PER_SEC: i128 = 1_000_000_000;
const NS_PER_DAY: i128 = 86_400 * NS_PER_SEC;

/// The words of the syntax (matched in any case). A column named like one
/// prints in backticks.
const KEYWORDS: [&str; 11] = [
    "and", "or", "not", "between", "in", "is", "null", "true", "false", "inf", "nan",
];

/// Duration units: a number right before one is a [`Value::Duration`].
const UNITS: [(&str, i128); 7] = [
    ("ns", 1),
    ("us", 1_000),
    ("ms", 1_000_000),
    ("s", NS_PER_SEC),
    ("min", 60 * NS_PER_SEC),
    ("h", 3_600 * NS_PER_SEC),
    ("d", NS_PER_DAY),
];

/// A character of a bare column name (and of keywords).
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `s` between `quote`s, with `\`, the quote and line breaks and tabs
/// escaped by a backslash.
fn write_quoted(f: &mut fmt::Formatter<'_>, s: &str, quote: char) -> fmt::Result {
    use fmt::Write;
    f.write_char(quote)?;
    for c in s.chars() {
        match c {
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\t' => f.write_str("\\t")?,
            '\r' => f.write_str("\\r")?,
            c if c == quote => {
                f.write_char('\\')?;
                f.write_char(c)?;
            }
            c => f.write_char(c)?,
        }
    }
    f.write_char(quote)
}

/// Whether `path` reads back bare: dot-separated words of letters, digits
/// and `_`, not starting with a digit, not a keyword.
fn is_bare_path(path: &str) -> bool {
    !path.starts_with(|c: char| c.is_ascii_digit())
        && path
            .split('.')
            .all(|seg| !seg.is_empty() && seg.chars().all(is_word_char))
        && !KEYWORDS.iter().any(|k| path.eq_ignore_ascii_case(k))
}

/// A column path, bare (`position.x`) or in backticks (`` `max temp` ``).
struct PathText<'a>(&'a str);

impl fmt::Display for PathText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if is_bare_path(self.0) {
            f.write_str(self.0)
        } else {
            write_quoted(f, self.0, '`')
        }
    }
}

/// Parses the `--where` syntax of the `h5vec` command, SQL- and
/// pandas-`query`-like. Keywords are matched in any case; spaces between
/// tokens are free.
///
/// ```text
/// filter    := or
/// or        := and ("or" and)*                    lowest
/// and       := not ("and" not)*
/// not       := "not" not | "(" or ")" | predicate
/// predicate := column ("==" | "=" | "!=" | "<>" | "<" | "<=" | ">" | ">=") value
///            | column ["not"] "between" value "and" value   both ends included
///            | column ["not"] "in" "(" [value ("," value)*] ")"
///            | column "is" ["not"] "null"
/// column    := word ("." word)* | `any text`      word: letters, digits, _
/// value     := integer | float | duration | "true" | "false" | string
/// ```
///
/// * integers: `42`, `-7`, `+3`: any `i128`; larger is an error. `10` is
///   an integer, `10.0` a float.
/// * floats: `1.5`, `1e9`, `-2.5E-3`, `inf`, `-inf`. `nan` is an error
///   (NaN never matches: write `column is null`), so is a literal beyond
///   `f64` (`1e400`).
/// * durations: a number and a unit, no space: `1500ns`, `250us`, `1.5ms`,
///   `30s`, `5min`, `2h`, `1d` (whole nanoseconds).
/// * strings: `'single'` or `"double"` quotes, escapes `\\` `\'` `\"`
///   `` \` `` `\n` `\t` `\r`. Instants, dates and times of day are written
///   as strings (`'2024-01-01T00:00:00Z'`, `'2024-01-01'`, `'12:30:00'`)
///   and converted to the column's type when the filter runs. Enum labels
///   are strings too.
/// * column names with other characters, or named like a keyword, go in
///   backticks (same escapes): `` `max temp` > 3 ``.
///
/// `a not in (...)` is `not (a in (...))`, `a not between x and y` is
/// `not (a between x and y)`. At most 200 parentheses and `not` nest, and
/// the tree of `and`, `or`, `not` is at most 1000 deep (a chain of 1001
/// `or`: write `column in (...)`). A bad text is an [`ErrorKind::Invalid`](crate::ErrorKind::Invalid)
/// error whose message says where (the character position from 1) and what
/// was expected: `--where: at 16: expected a value after ">=", found end of text`.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// use h5vec::col;
///
/// let f: h5vec::Filter = "temperature >= 10 and status == 'Ok'".parse()?;
/// assert_eq!(f, col("temperature").ge(10) & col("status").eq("Ok"));
/// assert_eq!(f.to_string(), r#"temperature >= 10 and status == "Ok""#);
///
/// let g: h5vec::Filter = "NOT (id IN (1, 2, 3) OR `max temp` IS NULL)".parse()?;
/// assert_eq!(g, !(col("id").is_in([1, 2, 3]) | col("max temp").is_null()));
///
/// let err = "temperature >= ".parse::<h5vec::Filter>().unwrap_err();
/// assert!(err.to_string().contains("at 16: expected a value after \">=\", found end of text"));
/// # Ok(()) }
/// ```
impl FromStr for Filter {
    type Err = Error;

    fn from_str(text: &str) -> Result<Filter, Error> {
        let mut p = Parser {
            chars: text.chars().collect(),
            i: 0,
            nesting: 0,
        };
        p.skip_ws();
        if p.at_end() {
            return Err(p.error(p.i, "expected a filter, found end of text"));
        }
        let (e, _) = p.or()?;
        p.skip_ws();
        if !p.at_end() {
            return Err(p.error(
                p.i,
                format!(
                    "expected \"and\", \"or\" or end of text, found {}",
                    p.found()
                ),
            ));
        }
        Ok(Filter(e))
    }
}

/// A recursive-descent parser over the characters of the text.
struct Parser {
    chars: Vec<char>,
    /// The next character.
    i: usize,
    /// How many parentheses and `not` enclose the position.
    nesting: usize,
}

/// An expression and its depth in `and`, `or` and `not` nodes.
type Tree = (Expr, usize);

/// At most this many parentheses and `not` nest (the parser recurses on
/// them: a bound keeps a hostile text from overflowing the stack).
const MAX_DEPTH: usize = 200;

/// At most this deep a tree of `and`, `or`, `not` (whoever walks it
/// recurses on it too).
const MAX_TREE_DEPTH: usize = 1_000;

impl Parser {
    /// `--where: at N: msg` (N: the character position from 1).
    fn error(&self, at: usize, msg: impl fmt::Display) -> Error {
        Error::invalid("$", format!("--where: at {}: {msg}", at + 1))
    }

    fn at_end(&self) -> bool {
        self.i >= self.chars.len()
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.i += 1;
        }
    }

    /// The end of the word starting at `at`.
    fn word_end(&self, at: usize) -> usize {
        let mut j = at;
        while self.chars.get(j).is_some_and(|&c| is_word_char(c)) {
            j += 1;
        }
        j
    }

    fn text(&self, from: usize, to: usize) -> String {
        self.chars[from..to].iter().collect()
    }

    /// What is at the next position, for messages: `end of text`, a word
    /// or number in quotes, or one character in quotes.
    fn found(&self) -> String {
        match self.peek() {
            None => "end of text".to_owned(),
            Some(c) if is_word_char(c) => {
                format!("\"{}\"", self.text(self.i, self.word_end(self.i)))
            }
            Some(c) => format!("{:?}", c.to_string()),
        }
    }

    /// Consumes keyword `kw` (any case) if it is the next word, not the
    /// start of a longer word or of a dotted path.
    fn keyword(&mut self, kw: &str) -> bool {
        self.skip_ws();
        let end = self.word_end(self.i);
        if self.text(self.i, end).eq_ignore_ascii_case(kw) && self.chars.get(end) != Some(&'.') {
            self.i = end;
            true
        } else {
            false
        }
    }

    /// Keyword `kw` is required next (`context` says where, for the
    /// message).
    fn expect_keyword(&mut self, kw: &str, context: &str) -> Result<(), Error> {
        if self.keyword(kw) {
            Ok(())
        } else {
            Err(self.error(
                self.i,
                format!("expected \"{kw}\" {context}, found {}", self.found()),
            ))
        }
    }

    fn expect_char(&mut self, c: char, context: &str) -> Result<(), Error> {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.error(
                self.i,
                format!("expected \"{c}\" {context}, found {}", self.found()),
            ))
        }
    }

    /// Fails if a parenthesis or `not` at `at` would nest the parser
    /// deeper than [`MAX_DEPTH`] (its recursion is bounded).
    fn enter(&mut self, at: usize) -> Result<(), Error> {
        self.nesting += 1;
        if self.nesting > MAX_DEPTH {
            return Err(self.error(
                at,
                format!("the filter nests more than {MAX_DEPTH} parentheses and \"not\""),
            ));
        }
        Ok(())
    }

    /// `left word right` as an `and` / `or` node, if the tree stays at most
    /// [`MAX_TREE_DEPTH`] deep.
    fn join(
        &self,
        left: Tree,
        right: Tree,
        at: usize,
        make: fn(Box<Expr>, Box<Expr>) -> Expr,
    ) -> Result<Tree, Error> {
        let depth = left.1.max(right.1) + 1;
        if depth > MAX_TREE_DEPTH {
            return Err(self.too_deep(at));
        }
        Ok((make(Box::new(left.0), Box::new(right.0)), depth))
    }

    fn too_deep(&self, at: usize) -> Error {
        self.error(
            at,
            format!(
                "the filter nests more than {MAX_TREE_DEPTH} \"and\", \"or\" and \"not\": \
                 write a long list of alternatives as \"column in (...)\""
            ),
        )
    }

    fn or(&mut self) -> Result<Tree, Error> {
        let mut e = self.and()?;
        loop {
            self.skip_ws();
            let at = self.i;
            if !self.keyword("or") {
                break;
            }
            let right = self.and()?;
            e = self.join(e, right, at, Expr::Or)?;
        }
        Ok(e)
    }

    fn and(&mut self) -> Result<Tree, Error> {
        let mut e = self.not()?;
        loop {
            self.skip_ws();
            let at = self.i;
            if !self.keyword("and") {
                break;
            }
            let right = self.not()?;
            e = self.join(e, right, at, Expr::And)?;
        }
        Ok(e)
    }

    fn not(&mut self) -> Result<Tree, Error> {
        self.skip_ws();
        let start = self.i;
        if self.keyword("not") {
            self.enter(start)?;
            let (e, depth) = self.not()?;
            self.nesting -= 1;
            if depth + 1 > MAX_TREE_DEPTH {
                return Err(self.too_deep(start));
            }
            return Ok((Expr::Not(Box::new(e)), depth + 1));
        }
        if self.peek() == Some('(') {
            self.enter(start)?;
            self.i += 1;
            let e = self.or()?;
            self.nesting -= 1;
            return self
                .expect_char(')', &format!("to close the \"(\" at {}", start + 1))
                .map(|()| e);
        }
        // A `not` before `in` / `between` adds one level.
        self.predicate().map(|e| {
            let depth = usize::from(matches!(e, Expr::Not(_)));
            (e, depth)
        })
    }

    fn predicate(&mut self) -> Result<Expr, Error> {
        let column = self.column()?;
        self.skip_ws();
        let op_start = self.i;
        let mut op_end = op_start;
        while self
            .chars
            .get(op_end)
            .is_some_and(|c| matches!(c, '=' | '!' | '<' | '>'))
        {
            op_end += 1;
        }
        if op_end > op_start {
            let sym = self.text(op_start, op_end);
            let op = match sym.as_str() {
                "==" | "=" => CmpOp::Eq,
                "!=" | "<>" => CmpOp::Ne,
                "<" => CmpOp::Lt,
                "<=" => CmpOp::Le,
                ">" => CmpOp::Gt,
                ">=" => CmpOp::Ge,
                _ => {
                    return Err(self.error(
                        op_start,
                        format!("unknown operator \"{sym}\": expected one of == = != <> < <= > >="),
                    ))
                }
            };
            self.i = op_end;
            let value = self.value(&format!("\"{sym}\""))?;
            return Ok(Expr::Cmp { column, op, value });
        }
        let negated = self.keyword("not");
        if self.keyword("between") {
            let low = self.value("\"between\"")?;
            self.expect_keyword("and", "after the low end of \"between\"")?;
            let high = self.value("\"between ... and\"")?;
            let e = Expr::Between { column, low, high };
            return Ok(if negated { Expr::Not(Box::new(e)) } else { e });
        }
        if self.keyword("in") {
            let values = self.list()?;
            let e = Expr::In { column, values };
            return Ok(if negated { Expr::Not(Box::new(e)) } else { e });
        }
        if negated {
            return Err(self.error(
                self.i,
                format!(
                    "expected \"in\" or \"between\" after \"not\", found {}",
                    self.found()
                ),
            ));
        }
        if self.keyword("is") {
            let null = !self.keyword("not");
            self.expect_keyword("null", "after \"is\"")?;
            return Ok(Expr::Null { column, null });
        }
        Err(self.error(
            self.i,
            format!(
                "expected an operator (== != < <= > >= between in is) after the column {}, found {}",
                PathText(&column),
                self.found()
            ),
        ))
    }

    /// A bare dotted path or a `backticked` name.
    fn column(&mut self) -> Result<String, Error> {
        self.skip_ws();
        let start = self.i;
        if self.peek() == Some('`') {
            return self.quoted('`', "column name");
        }
        loop {
            let end = self.word_end(self.i);
            if end == self.i {
                let msg = if self.i == start {
                    format!(
                        "expected a column, \"not\" or \"(\", found {}",
                        self.found()
                    )
                } else {
                    format!("expected a name after \".\", found {}", self.found())
                };
                return Err(self.error(self.i, msg));
            }
            self.i = end;
            if self.peek() == Some('.') {
                self.i += 1;
            } else {
                return Ok(self.text(start, self.i));
            }
        }
    }

    /// The text between `quote` and the next unescaped `quote`, unescaped.
    fn quoted(&mut self, quote: char, what: &str) -> Result<String, Error> {
        let open = self.i;
        self.i += 1;
        let mut s = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error(
                    open,
                    format!("unterminated {what}: expected a closing {quote} before end of text"),
                ));
            };
            self.i += 1;
            match c {
                c if c == quote => return Ok(s),
                '\\' => {
                    let Some(e) = self.peek() else {
                        continue; // the loop reports the unterminated text
                    };
                    s.push(match e {
                        '\\' => '\\',
                        '\'' => '\'',
                        '"' => '"',
                        '`' => '`',
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        _ => {
                            return Err(self.error(
                                self.i - 1,
                                format!(
                                    "unknown escape \\{e} in a {what}: expected one of \
                                     \\\\ \\' \\\" \\` \\n \\t \\r"
                                ),
                            ));
                        }
                    });
                    self.i += 1;
                }
                c => s.push(c),
            }
        }
    }

    /// `( value, ... )` after `in`.
    fn list(&mut self) -> Result<Vec<Value>, Error> {
        self.expect_char('(', "after \"in\"")?;
        let mut values = Vec::new();
        self.skip_ws();
        if self.peek() == Some(')') {
            self.i += 1;
            return Ok(values);
        }
        loop {
            let after = if values.is_empty() { "\"(\"" } else { "\",\"" };
            values.push(self.value(after)?);
            self.skip_ws();
            match self.peek() {
                Some(',') => self.i += 1,
                Some(')') => {
                    self.i += 1;
                    return Ok(values);
                }
                _ => {
                    return Err(self.error(
                        self.i,
                        format!(
                            "expected \",\" or \")\" in the list of \"in\", found {}",
                            self.found()
                        ),
                    ))
                }
            }
        }
    }

    /// A value; `after` names what came before, for messages.
    fn value(&mut self, after: &str) -> Result<Value, Error> {
        self.skip_ws();
        let start = self.i;
        let Some(c) = self.peek() else {
            return Err(self.error(
                start,
                format!("expected a value after {after}, found end of text"),
            ));
        };
        if c == '\'' || c == '"' {
            return self.quoted(c, "string").map(Value::Str);
        }
        if c.is_ascii_digit() || c == '+' || c == '-' || c == '.' {
            return self.number(after);
        }
        let end = self.word_end(start);
        let word = self.text(start, end);
        let lower = word.to_ascii_lowercase();
        let value = match lower.as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            "inf" => Some(Value::Float(f64::INFINITY)),
            _ => None,
        };
        if let Some(v) = value {
            if self.chars.get(end) != Some(&'.') {
                self.i = end;
                return Ok(v);
            }
        }
        let msg = match lower.as_str() {
            "nan" => "NaN never matches a comparison: to find missing values write \
                      \"column is null\""
                .to_owned(),
            "null" => format!(
                "a comparison with null is never true: write \"column is null\" or \
                 \"column is not null\" (found \"{word}\" after {after})"
            ),
            "" => format!(
                "expected a value (a number, 'text', true or false) after {after}, found {}",
                self.found()
            ),
            _ => format!(
                "expected a value (a number, 'text', true or false) after {after}, found \
                 \"{word}\" (strings are quoted: '{word}')"
            ),
        };
        Err(self.error(start, msg))
    }

    /// An integer, a float or a duration (number and unit).
    fn number(&mut self, after: &str) -> Result<Value, Error> {
        let start = self.i;
        let negative = self.peek() == Some('-');
        if matches!(self.peek(), Some('+' | '-')) {
            self.i += 1;
        }
        let digits = |p: &mut Parser| {
            let from = p.i;
            while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                p.i += 1;
            }
            p.i - from
        };
        let int_start = self.i;
        if digits(self) == 0 {
            // `-inf`, `+inf`.
            let end = self.word_end(self.i);
            if self.i > start && self.text(self.i, end).eq_ignore_ascii_case("inf") {
                self.i = end;
                return Ok(Value::Float(if negative {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }));
            }
            return Err(self.error(
                self.i,
                format!(
                    "expected a digit in the number after {after}, found {}",
                    self.found()
                ),
            ));
        }
        let int_end = self.i;
        let mut float = false;
        let mut frac = (self.i, self.i);
        if self.peek() == Some('.') {
            self.i += 1;
            let from = self.i;
            if digits(self) == 0 {
                return Err(self.error(
                    self.i,
                    format!(
                        "expected a digit after \".\" in a number, found {}",
                        self.found()
                    ),
                ));
            }
            frac = (from, self.i);
            float = true;
        }
        let mut exponent = false;
        if matches!(self.peek(), Some('e' | 'E')) {
            let mut j = self.i + 1;
            if matches!(self.chars.get(j), Some('+' | '-')) {
                j += 1;
            }
            if self.chars.get(j).is_some_and(|c| c.is_ascii_digit()) {
                self.i = j;
                digits(self);
                float = true;
                exponent = true;
            }
        }
        let number = self.text(start, self.i);
        if self.peek().is_some_and(|c| c.is_alphabetic()) {
            let unit_start = self.i;
            let unit_end = self.word_end(unit_start);
            let unit = self.text(unit_start, unit_end);
            let Some(&(_, scale)) = UNITS.iter().find(|(u, _)| *u == unit) else {
                return Err(self.error(
                    unit_start,
                    format!(
                        "unknown unit \"{unit}\" after {number}: a duration takes one of \
                         ns us ms s min h d (like 1.5s)"
                    ),
                ));
            };
            if exponent {
                return Err(self.error(
                    start,
                    format!(
                        "a duration is digits and a unit, without an exponent (like 1.5s), \
                         found {number}{unit}"
                    ),
                ));
            }
            self.i = unit_end;
            let whole = self.text(int_start, int_end);
            let fraction = self.text(frac.0, frac.1);
            return duration_ns(&whole, &fraction, scale, negative)
                .map(Value::Duration)
                .ok_or_else(|| {
                    self.error(
                        start,
                        format!(
                            "duration {number}{unit} is not a whole number of nanoseconds \
                             within ±2^127 ns"
                        ),
                    )
                });
        }
        if self.peek().is_some_and(|c| is_word_char(c) || c == '.') {
            return Err(self.error(
                self.i,
                format!(
                    "expected a space or an operator after the number {number}, found {}",
                    self.found()
                ),
            ));
        }
        if float {
            let x: f64 = number
                .parse()
                .map_err(|_| self.error(start, format!("{number} is not a valid float")))?;
            if x.is_infinite() {
                return Err(self.error(
                    start,
                    format!(
                        "{number} is out of the range of a 64-bit float (write inf for infinity)"
                    ),
                ));
            }
            Ok(Value::Float(x))
        } else {
            number.parse::<i128>().map(Value::Int).map_err(|_| {
                self.error(
                    start,
                    format!(
                        "the integer {number} is out of range: integers are at most {} \
                         and at least {} (write a float, like 1e40, for larger numbers)",
                        i128::MAX,
                        i128::MIN
                    ),
                )
            })
        }
    }
}

/// `whole.fraction` times `scale` nanoseconds, if a whole number of them
/// in the range of `i128`.
fn duration_ns(whole: &str, fraction: &str, scale: i128, negative: bool) -> Option<i128> {
    // Signed from the start, so that -2^127 ns (i128::MIN) reads back.
    let sign = if negative { "-" } else { "" };
    let mut ns = format!("{sign}{whole}")
        .parse::<i128>()
        .ok()?
        .checked_mul(scale)?;
    let fraction = fraction.trim_end_matches('0');
    if !fraction.is_empty() {
        // A nanosecond is 1e-9 s and a day 8.64e13 ns: more than 14
        // significant fraction digits is never whole.
        if fraction.len() > 14 {
            return None;
        }
        let denominator = 10i128.pow(fraction.len() as u32);
        let part = fraction.parse::<i128>().ok()?.checked_mul(scale)?;
        if part % denominator != 0 {
            return None;
        }
        let part = part / denominator;
        ns = if negative {
            ns.checked_sub(part)?
        } else {
            ns.checked_add(part)?
        };
    }
    Some(ns)
}

#[cfg(test)]
mod tests;
