//! The `--where` text syntax of a [`Filter`](super::Filter): its parser
//! (`FromStr`, grammar on that impl) and its printer (`Display`), which
//! round-trip (`f.to_string().parse() == Ok(f)`, times of day, dates and
//! instants aside: they print as strings), and the hand-written calendar
//! arithmetic that prints instants and dates without chrono.

use std::fmt;
use std::str::FromStr;

use super::filter::{CmpOp, Expr, Filter, Value};
use crate::error::Error;

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

/// Year, month (1..=12) and day (1..=31) of the proleptic Gregorian
/// calendar, `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i128) -> (i128, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], March first
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i128::from(m <= 2);
    (y, m, d)
}

/// `YYYY-MM-DD`; years outside 0..=9999 signed and widened as ISO 8601
/// allows (`+10000-01-01`, `-0001-12-31`).
fn write_date(f: &mut fmt::Formatter<'_>, days: i128) -> fmt::Result {
    let (y, m, d) = civil_from_days(days);
    if (0..=9999).contains(&y) {
        write!(f, "{y:04}-{m:02}-{d:02}")
    } else {
        write!(f, "{y:+05}-{m:02}-{d:02}")
    }
}

/// `HH:MM:SS.nnnnnnnnn` for `ns` in `0..` (hours past 23 print as they
/// are: a leap second of chrono reads `24:00:00.5...`).
fn write_time(f: &mut fmt::Formatter<'_>, ns: i128) -> fmt::Result {
    let secs = ns / NS_PER_SEC;
    write!(
        f,
        "{:02}:{:02}:{:02}.{:09}",
        secs / 3_600,
        secs / 60 % 60,
        secs % 60,
        ns % NS_PER_SEC
    )
}

/// The `--where` text of a value: numbers, `true` / `false`, strings in
/// double quotes; durations as whole nanoseconds with the unit `ns`
/// (`1500000000ns`, which parses back to the same duration); instants,
/// dates and times of day as strings the evaluator reads for a time column
/// (`"2024-01-01T00:00:00.000000001Z"` in UTC, without the `Z` when
/// zone-less; `"2024-01-01"`; `"12:30:00.000000000"`), which parse back
/// as [`Value::Str`]. A NaN float prints `NaN`, which does not parse: it
/// never matches, write `is null`.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            // `{:?}`: the shortest text that parses back to the same bits,
            // with a `.0` or an exponent (`10.0`, `1e300`, `inf`).
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Str(s) => write_quoted(f, s, '"'),
            Value::Instant { ns, utc } => {
                f.write_str("\"")?;
                write_date(f, ns.div_euclid(NS_PER_DAY))?;
                f.write_str("T")?;
                write_time(f, ns.rem_euclid(NS_PER_DAY))?;
                f.write_str(if *utc { "Z\"" } else { "\"" })
            }
            Value::Date(d) => {
                f.write_str("\"")?;
                write_date(f, i128::from(*d))?;
                f.write_str("\"")
            }
            Value::TimeOfDay(t) => {
                f.write_str("\"")?;
                if *t < 0 {
                    f.write_str("-")?;
                }
                write_time(f, i128::from(*t).abs())?;
                f.write_str("\"")
            }
            Value::Duration(d) => write!(f, "{d}ns"),
        }
    }
}

/// Binding strength, for parentheses: or 1, and 2, not 3.
fn fmt_expr(e: &Expr, f: &mut fmt::Formatter<'_>, parent: u8) -> fmt::Result {
    match e {
        Expr::Cmp { column, op, value } => {
            write!(f, "{} {} {value}", PathText(column), op.symbol())
        }
        Expr::Between { column, low, high } => {
            write!(f, "{} between {low} and {high}", PathText(column))
        }
        Expr::In { column, values } => write_in(f, column, values, ""),
        Expr::Null { column, null } => {
            let not = if *null { "" } else { "not " };
            write!(f, "{} is {not}null", PathText(column))
        }
        Expr::Not(a) => match &**a {
            Expr::In { column, values } => write_in(f, column, values, "not "),
            Expr::Between { column, low, high } => {
                write!(f, "{} not between {low} and {high}", PathText(column))
            }
            a => {
                f.write_str("not ")?;
                fmt_expr(a, f, 3)
            }
        },
        // Both are left-associative: a right operand of the same kind
        // (`a & (b & c)`) keeps its parentheses.
        Expr::And(a, b) => fmt_binary(f, a, b, " and ", 2, parent),
        Expr::Or(a, b) => fmt_binary(f, a, b, " or ", 1, parent),
    }
}

fn fmt_binary(
    f: &mut fmt::Formatter<'_>,
    a: &Expr,
    b: &Expr,
    word: &str,
    level: u8,
    parent: u8,
) -> fmt::Result {
    let paren = parent > level;
    if paren {
        f.write_str("(")?;
    }
    fmt_expr(a, f, level)?;
    f.write_str(word)?;
    fmt_expr(b, f, level + 1)?;
    if paren {
        f.write_str(")")?;
    }
    Ok(())
}

fn write_in(f: &mut fmt::Formatter<'_>, column: &str, values: &[Value], not: &str) -> fmt::Result {
    write!(f, "{} {not}in (", PathText(column))?;
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{v}")?;
    }
    f.write_str(")")
}

/// The filter in the `--where` syntax, which [`str::parse`] reads back to
/// the same filter (see [`Value`]'s `Display` for how each value prints).
impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_expr(&self.0, f, 0)
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
mod tests {
    use super::*;
    use crate::query::col;
    use crate::ErrorKind;

    fn parse(text: &str) -> Filter {
        match text.parse::<Filter>() {
            Ok(f) => f,
            Err(e) => panic!("{text:?}: {e}"),
        }
    }

    /// The message of the error `text` gives.
    fn error(text: &str) -> String {
        let e = text.parse::<Filter>().unwrap_err();
        assert_eq!(e.path(), "$");
        match e.kind() {
            ErrorKind::Invalid(m) => m.clone(),
            other => panic!("{other:?}"),
        }
    }

    fn round_trip(f: &Filter) {
        let text = f.to_string();
        let back = text
            .parse::<Filter>()
            .unwrap_or_else(|e| panic!("{text:?} of {f:?}: {e}"));
        assert_eq!(&back, f, "{text}");
        assert_eq!(back.to_string(), text);
    }

    #[test]
    fn every_comparison_operator() {
        for (sym, f) in [
            ("==", col("a").eq(1)),
            ("=", col("a").eq(1)),
            ("!=", col("a").ne(1)),
            ("<>", col("a").ne(1)),
            ("<", col("a").lt(1)),
            ("<=", col("a").le(1)),
            (">", col("a").gt(1)),
            (">=", col("a").ge(1)),
        ] {
            assert_eq!(parse(&format!("a {sym} 1")), f, "{sym}");
            assert_eq!(parse(&format!("a{sym}1")), f, "{sym} without spaces");
        }
    }

    #[test]
    fn between_in_null() {
        assert_eq!(parse("x between 1 and 2.5"), col("x").between(1, 2.5));
        assert_eq!(parse("x not between 1 and 2"), !col("x").between(1, 2));
        assert_eq!(parse("x in (1, 'a', true)"), {
            let vs: [Value; 3] = [1.into(), "a".into(), true.into()];
            col("x").is_in(vs)
        });
        assert_eq!(parse("x in ()"), col("x").is_in(Vec::<i32>::new()));
        assert_eq!(parse("x in(7)"), col("x").is_in([7]));
        assert_eq!(parse("x not in (1,2)"), !col("x").is_in([1, 2]));
        assert_eq!(parse("x is null"), col("x").is_null());
        assert_eq!(parse("x is not null"), col("x").is_not_null());
        // `between`'s `and` binds to it; the next `and` combines.
        assert_eq!(
            parse("x between 1 and 2 and y == 3"),
            col("x").between(1, 2) & col("y").eq(3)
        );
    }

    #[test]
    fn precedence_and_parentheses() {
        let (a, b, c) = (col("a").eq(1), col("b").eq(2), col("c").eq(3));
        assert_eq!(
            parse("a == 1 or b == 2 and not c == 3"),
            a.clone() | (b.clone() & !c.clone())
        );
        assert_eq!(
            parse("(a == 1 or b == 2) and not c == 3"),
            (a.clone() | b.clone()) & !c.clone()
        );
        assert_eq!(parse("not (a == 1 or b == 2)"), !(a.clone() | b.clone()));
        assert_eq!(parse("not not a == 1"), !!a.clone());
        assert_eq!(parse("((a == 1))"), a.clone());
        // Left-associative.
        assert_eq!(
            parse("a == 1 and b == 2 and c == 3"),
            (a.clone() & b.clone()) & c.clone()
        );
        assert_eq!(
            parse("a == 1 or b == 2 or c == 3"),
            (a.clone() | b.clone()) | c
        );
        assert_eq!(parse("not a == 1 and b == 2"), !a & b);
    }

    #[test]
    fn keywords_in_any_case() {
        assert_eq!(
            parse("NOT a IS NULL AnD b Between 1 AND 2 oR c NoT In (TRUE, False)"),
            (!col("a").is_null() & col("b").between(1, 2)) | !col("c").is_in([true, false])
        );
        assert_eq!(parse("a IS NOT NULL"), col("a").is_not_null());
        assert_eq!(parse("a == INF"), col("a").eq(f64::INFINITY));
    }

    #[test]
    fn columns() {
        assert_eq!(parse("position.x > 0"), col("position.x").gt(0));
        assert_eq!(parse("a_1.B2._c == 0"), col("a_1.B2._c").eq(0));
        assert_eq!(parse("pair.0 == 0"), col("pair.0").eq(0));
        assert_eq!(parse("température == 0"), col("température").eq(0));
        assert_eq!(parse("`max temp` > 3"), col("max temp").gt(3));
        assert_eq!(parse(r"`a\`b` > 3"), col("a`b").gt(3));
        assert_eq!(parse("`not` == 1"), col("not").eq(1));
        // Keywords start a longer word or a path: columns.
        assert_eq!(parse("notes == 1"), col("notes").eq(1));
        assert_eq!(parse("not.x == 1"), col("not.x").eq(1));
        assert_eq!(parse("order == 1"), col("order").eq(1));
        assert_eq!(
            parse("andy == 1 and origin == 2"),
            col("andy").eq(1) & col("origin").eq(2)
        );
    }

    #[test]
    fn values() {
        assert_eq!(parse("a == 10"), col("a").eq(Value::Int(10)));
        assert_eq!(parse("a == 10.0"), col("a").eq(Value::Float(10.0)));
        assert_eq!(parse("a == -7"), col("a").eq(-7));
        assert_eq!(parse("a == +7"), col("a").eq(7));
        assert_eq!(parse("a == 1e9"), col("a").eq(1e9));
        assert_eq!(parse("a == -2.5E-3"), col("a").eq(-2.5e-3));
        assert_eq!(parse("a == 1E+2"), col("a").eq(100.0));
        assert_eq!(parse("a == -inf"), col("a").eq(f64::NEG_INFINITY));
        assert_eq!(parse("a == +inf"), col("a").eq(f64::INFINITY));
        assert_eq!(parse("a == true"), col("a").eq(true));
        assert_eq!(parse("a == False"), col("a").eq(false));
        let max = i128::MAX.to_string();
        let min = i128::MIN.to_string();
        assert_eq!(
            parse(&format!("a == {max}")),
            col("a").eq(Value::Int(i128::MAX))
        );
        assert_eq!(
            parse(&format!("a == {min}")),
            col("a").eq(Value::Int(i128::MIN))
        );
        assert_eq!(parse("a == 'Ok'"), col("a").eq("Ok"));
        assert_eq!(parse("a == \"Ok\""), col("a").eq("Ok"));
        assert_eq!(parse(r#"a == 'it\'s "x"'"#), col("a").eq("it's \"x\""));
        assert_eq!(
            parse(r#"a == "\\ \n\t\r\` \"""#),
            col("a").eq("\\ \n\t\r` \"")
        );
        assert_eq!(parse("a == ''"), col("a").eq(""));
        assert_eq!(
            parse("a == '2024-01-01T00:00:00Z'"),
            col("a").eq("2024-01-01T00:00:00Z")
        );
    }

    #[test]
    fn durations() {
        let d = |ns: i128| col("d").gt(Value::Duration(ns));
        assert_eq!(parse("d > 1500ns"), d(1500));
        assert_eq!(parse("d > 250us"), d(250_000));
        assert_eq!(parse("d > 1.5ms"), d(1_500_000));
        assert_eq!(parse("d > 30s"), d(30_000_000_000));
        assert_eq!(parse("d > 5min"), d(300_000_000_000));
        assert_eq!(parse("d > 2h"), d(7_200_000_000_000));
        assert_eq!(parse("d > 1d"), d(86_400_000_000_000));
        assert_eq!(parse("d > -0.000000001s"), d(-1));
        assert_eq!(parse("d > 1.50000000000000000000s"), d(1_500_000_000));
        assert_eq!(
            parse("d > 1.5s"),
            col("d").gt(std::time::Duration::from_millis(1500))
        );
        assert_eq!(parse("d > -1.5s"), d(-1_500_000_000));
        assert_eq!(parse("d > +2.25min"), d(135_000_000_000));
        assert_eq!(parse("d > -0s"), d(0));
        assert!(error("d > 170141183460469231731687303715884105728ns").contains("within"));
        assert!(error("d > 1.5ns").contains("not a whole number of nanoseconds"));
        assert!(error("d > 0.0000000001s").contains("not a whole number"));
        assert!(error("d > 1e3s").contains("without an exponent"));
        assert!(error("d > 3weeks").contains("unknown unit \"weeks\""));
    }

    #[test]
    fn errors_say_where_and_what() {
        for (text, msg) in [
            ("", "--where: at 1: expected a filter, found end of text"),
            ("   ", "--where: at 4: expected a filter, found end of text"),
            (
                "temperature >= ",
                "--where: at 16: expected a value after \">=\", found end of text",
            ),
            (
                "a == 'Ok",
                "--where: at 6: unterminated string: expected a closing ' before end of text",
            ),
            (
                "`a == 1",
                "--where: at 1: unterminated column name: expected a closing ` before end of text",
            ),
            (
                "a => 1",
                "--where: at 3: unknown operator \"=>\": expected one of == = != <> < <= > >=",
            ),
            (
                "a === 1",
                "--where: at 3: unknown operator \"===\": expected one of == = != <> < <= > >=",
            ),
            (
                "a ~ 1",
                "--where: at 3: expected an operator (== != < <= > >= between in is) after \
                 the column a, found \"~\"",
            ),
            (
                "a == 1 b == 2",
                "--where: at 8: expected \"and\", \"or\" or end of text, found \"b\"",
            ),
            (
                "a == 1)",
                "--where: at 7: expected \"and\", \"or\" or end of text, found \")\"",
            ),
            (
                "x between 1",
                "--where: at 12: expected \"and\" after the low end of \"between\", found end of text",
            ),
            (
                "x between 1 or 2",
                "--where: at 13: expected \"and\" after the low end of \"between\", found \"or\"",
            ),
            (
                "a == 1234567890123456789012345678901234567890",
                "--where: at 6: the integer 1234567890123456789012345678901234567890 is out of \
                 range: integers are at most 170141183460469231731687303715884105727 and at least \
                 -170141183460469231731687303715884105728 (write a float, like 1e40, for larger numbers)",
            ),
            (
                "(a == 1 or b == 2",
                "--where: at 18: expected \")\" to close the \"(\" at 1, found end of text",
            ),
            (
                "a == nan",
                "--where: at 6: NaN never matches a comparison: to find missing values write \
                 \"column is null\"",
            ),
            (
                "a == Ok",
                "--where: at 6: expected a value (a number, 'text', true or false) after \"==\", \
                 found \"Ok\" (strings are quoted: 'Ok')",
            ),
            (
                "a in (1, 2",
                "--where: at 11: expected \",\" or \")\" in the list of \"in\", found end of text",
            ),
            ("a in 1", "--where: at 6: expected \"(\" after \"in\", found \"1\""),
            (
                "a in (1,)",
                "--where: at 9: expected a value (a number, 'text', true or false) after \",\", \
                 found \")\"",
            ),
            ("a is nul", "--where: at 6: expected \"null\" after \"is\", found \"nul\""),
            (
                "a not like 'x'",
                "--where: at 7: expected \"in\" or \"between\" after \"not\", found \"like\"",
            ),
            (
                "== 1",
                "--where: at 1: expected a column, \"not\" or \"(\", found \"=\"",
            ),
            ("a. == 1", "--where: at 3: expected a name after \".\", found \" \""),
            (
                "a == 1 and",
                "--where: at 11: expected a column, \"not\" or \"(\", found end of text",
            ),
            (
                "a == 'x\\q'",
                "--where: at 8: unknown escape \\q in a string: expected one of \\\\ \\' \\\" \\` \\n \\t \\r",
            ),
            (
                "a == 10abc",
                "--where: at 8: unknown unit \"abc\" after 10: a duration takes one of ns us ms s \
                 min h d (like 1.5s)",
            ),
            (
                "a == 1.",
                "--where: at 8: expected a digit after \".\" in a number, found end of text",
            ),
            (
                "a == 1.5.2",
                "--where: at 9: expected a space or an operator after the number 1.5, found \".\"",
            ),
            (
                "a == -",
                "--where: at 7: expected a digit in the number after \"==\", found end of text",
            ),
            (
                "a == 1e400",
                "--where: at 6: 1e400 is out of the range of a 64-bit float (write inf for infinity)",
            ),
        ] {
            assert_eq!(error(text), msg, "{text:?}");
        }
        assert!(error("a == null").contains("write \"column is null\""));
        // Positions count characters, not bytes.
        assert!(error("é == 'x").starts_with("--where: at 6: unterminated string"));
        // Displayed with the path.
        let e = "a ==".parse::<Filter>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "$: invalid data: --where: at 5: expected a value after \"==\", found end of text"
        );
    }

    #[test]
    fn nesting_is_bounded() {
        let parens = |n: usize| format!("{}a == 1{}", "(".repeat(n), ")".repeat(n));
        assert_eq!(parse(&parens(200)), col("a").eq(1));
        assert_eq!(
            error(&parens(201)),
            "--where: at 201: the filter nests more than 200 parentheses and \"not\""
        );
        let nots = |n: usize| format!("{}a == 1", "not ".repeat(n));
        round_trip(&parse(&nots(200)));
        assert!(
            error(&nots(100_000)).starts_with("--where: at 801: the filter nests more than 200")
        );
        // A chain of `or` is as deep as it is long.
        let chain = |n: usize| vec!["a == 1"; n].join(" or ");
        let f = parse(&chain(1_001));
        round_trip(&f);
        assert_eq!(
            error(&chain(1_002)),
            "--where: at 10008: the filter nests more than 1000 \"and\", \"or\" and \"not\": \
             write a long list of alternatives as \"column in (...)\""
        );
        round_trip(&parse(&format!("({}) and a == 1", chain(1_000))));
        assert!(error(&format!("({}) and a == 1", chain(1_001))).contains("more than 1000"));
        assert!(error(&format!("not ({})", chain(1_001))).contains("more than 1000"));
    }

    #[test]
    fn display_text() {
        assert_eq!(
            (col("temperature").ge(10.0) & col("status").eq("Ok")).to_string(),
            r#"temperature >= 10.0 and status == "Ok""#
        );
        assert_eq!(
            (col("a").eq(1) | col("b").eq(2) & !col("c").eq(3)).to_string(),
            "a == 1 or b == 2 and not c == 3"
        );
        assert_eq!(
            ((col("a").eq(1) | col("b").eq(2)) & !(col("c").eq(3) & col("d").eq(4))).to_string(),
            "(a == 1 or b == 2) and not (c == 3 and d == 4)"
        );
        assert_eq!(
            (col("a").eq(1) & (col("b").eq(2) & col("c").eq(3))).to_string(),
            "a == 1 and (b == 2 and c == 3)"
        );
        assert_eq!(
            (col("a").eq(1) | (col("b").eq(2) | col("c").eq(3))).to_string(),
            "a == 1 or (b == 2 or c == 3)"
        );
        assert_eq!(
            (!col("a").is_in([1, 2]) & !col("b").between(1, 2)).to_string(),
            "a not in (1, 2) and b not between 1 and 2"
        );
        assert_eq!(col("a").is_in(Vec::<u8>::new()).to_string(), "a in ()");
        assert_eq!(
            col("max temp").eq("say \"hi\"\n\\").to_string(),
            r#"`max temp` == "say \"hi\"\n\\""#
        );
        for (path, shown) in [
            ("a.b", "a.b"),
            ("a..b", "`a..b`"),
            ("a.", "`a.`"),
            ("", "``"),
            ("0", "`0`"),
            ("x.0", "x.0"),
            ("NOT", "`NOT`"),
            ("null", "`null`"),
            ("a`b", r"`a\`b`"),
            ("a-b", "`a-b`"),
        ] {
            assert_eq!(col(path).is_null().to_string(), format!("{shown} is null"));
        }
        for (x, shown) in [
            (10.0, "10.0"),
            (1e300, "1e300"),
            (-2.5e-3, "-0.0025"),
            (1e-7, "1e-7"),
            (0.1, "0.1"),
            (-0.0, "-0.0"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::MAX, "1.7976931348623157e308"),
            (f64::MIN_POSITIVE / 2.0, "1.1125369292536007e-308"),
        ] {
            assert_eq!(Value::Float(x).to_string(), shown);
        }
        assert_eq!(Value::Duration(1_500_000_000).to_string(), "1500000000ns");
        assert_eq!(Value::Duration(-1).to_string(), "-1ns");
    }

    #[test]
    fn dates_and_times_print_as_strings() {
        let instant = |ns: i128, utc: bool| Value::Instant { ns, utc }.to_string();
        assert_eq!(instant(0, true), r#""1970-01-01T00:00:00.000000000Z""#);
        assert_eq!(instant(0, false), r#""1970-01-01T00:00:00.000000000""#);
        assert_eq!(
            instant(1_704_067_200_000_000_001, true),
            r#""2024-01-01T00:00:00.000000001Z""#
        );
        assert_eq!(instant(-1, true), r#""1969-12-31T23:59:59.999999999Z""#);
        assert_eq!(
            instant(-86_400_000_000_000 - 1_500_000_000, true),
            r#""1969-12-30T23:59:58.500000000Z""#
        );
        assert_eq!(
            instant(i128::from(i64::MAX), true),
            r#""2262-04-11T23:47:16.854775807Z""#
        );
        assert_eq!(
            instant(i128::from(i64::MIN), true),
            r#""1677-09-21T00:12:43.145224192Z""#
        );
        // 2000-02-29 12:34:56.789.
        assert_eq!(
            instant(951_827_696_789_000_000, false),
            r#""2000-02-29T12:34:56.789000000""#
        );
        assert_eq!(
            Value::from(std::time::UNIX_EPOCH + std::time::Duration::from_nanos(1_500)).to_string(),
            r#""1970-01-01T00:00:00.000001500Z""#
        );
        let date = |d: i32| Value::Date(d).to_string();
        assert_eq!(date(0), r#""1970-01-01""#);
        assert_eq!(date(-1), r#""1969-12-31""#);
        assert_eq!(date(11_016), r#""2000-02-29""#);
        assert_eq!(date(11_017), r#""2000-03-01""#);
        assert_eq!(date(-25_509), r#""1900-02-28""#);
        assert_eq!(date(-25_508), r#""1900-03-01""#);
        assert_eq!(date(-719_162), r#""0001-01-01""#);
        assert_eq!(date(-719_528), r#""0000-01-01""#);
        assert_eq!(date(-719_529), r#""-0001-12-31""#);
        assert_eq!(date(2_932_896), r#""9999-12-31""#);
        assert_eq!(date(2_932_897), r#""+10000-01-01""#);
        assert_eq!(date(i32::MAX), r#""+5881580-07-11""#);
        assert_eq!(date(i32::MIN), r#""-5877641-06-23""#);
        let time = |t: i64| Value::TimeOfDay(t).to_string();
        assert_eq!(time(0), r#""00:00:00.000000000""#);
        assert_eq!(time(45_296_000_000_007), r#""12:34:56.000000007""#);
        assert_eq!(time(86_399_999_999_999), r#""23:59:59.999999999""#);
        assert_eq!(time(86_400_500_000_000), r#""24:00:00.500000000""#);
        assert_eq!(time(-1), r#""-00:00:00.000000001""#);
        // They parse back as strings, the same text.
        let f = col("t").ge(Value::Instant { ns: -1, utc: true });
        assert_eq!(
            parse(&f.to_string()),
            col("t").ge("1969-12-31T23:59:59.999999999Z")
        );
        // Extreme instants do not panic.
        for ns in [i128::MAX, i128::MIN] {
            let _ = instant(ns, true);
        }
    }

    #[cfg(feature = "chrono")]
    #[test]
    fn chrono_agrees_with_the_hand_written_calendar() {
        use chrono::{DateTime, NaiveDate};
        for days in (-800_000..3_000_000).step_by(997).chain([-1, 0, 1, 11_016]) {
            let d = NaiveDate::from_num_days_from_ce_opt(days + 719_163).unwrap();
            assert_eq!(
                Value::Date(days).to_string(),
                format!("\"{}\"", d.format("%Y-%m-%d"))
            );
        }
        for ns in [
            0i64,
            -1,
            1,
            i64::MAX,
            i64::MIN,
            951_827_696_789_000_000,
            -12_345_678_901_234_567,
        ] {
            let t = DateTime::from_timestamp_nanos(ns);
            assert_eq!(
                Value::from(t).to_string(),
                format!("\"{}\"", t.format("%Y-%m-%dT%H:%M:%S%.9fZ"))
            );
        }
    }

    #[test]
    fn built_filters_round_trip() {
        let filters = [
            col("temperature").ge(10.0) & col("status").eq("Ok"),
            col("a").eq(1) | col("b").eq(2) & !col("c").eq(3),
            (col("a").eq(1) | col("b").eq(2)) & !(col("c").eq(3) | col("d").eq(4)),
            col("a").eq(1) & (col("b").eq(2) & col("c").eq(3)),
            col("a").eq(1) | (col("b").eq(2) | col("c").eq(3)),
            !!col("a").is_null(),
            !col("a").is_in(["x", "y"]) | !col("b").between(-1.5, 2.5),
            !!col("a").is_in([1u8]),
            col("max temp").ne("it's \"quoted\"\\\n\t\r`"),
            col("`").lt(u64::MAX) & col("not").gt(i64::MIN),
            col("x").between(1e300, f64::INFINITY) & col("y").le(f64::NEG_INFINITY),
            col("z").eq(-0.0) & col("z").eq(5e-324) & col("w").eq(0.1 + 0.2),
            col("d").gt(std::time::Duration::new(3, 7)) & col("d").lt(Value::Duration(-5)),
            col("i").is_in([Value::Int(i128::MIN), Value::Int(i128::MAX)]),
            col("d").is_in([Value::Duration(i128::MIN), Value::Duration(i128::MAX)]),
            col("e").is_in(Vec::<String>::new()),
            col("pair.0").is_not_null(),
            col("é.ß").eq("ü"),
        ];
        for f in &filters {
            round_trip(f);
        }
    }

    /// Random filter trees (xorshift, fixed seed) print and parse back.
    #[test]
    fn random_filters_round_trip() {
        struct Rng(u64);
        impl Rng {
            fn next(&mut self) -> u64 {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                self.0
            }
            fn below(&mut self, n: u64) -> usize {
                (self.next() % n) as usize
            }
        }
        const COLUMNS: [&str; 8] = ["a", "b.c", "x y", "and", "0", "ts", "a\\b\"", "_1.2"];
        const TEXT: [char; 12] = [
            'a', ' ', '\'', '"', '\\', '\n', '\t', '`', 'é', '\u{1}', '\0', '\u{301}',
        ];
        fn value(r: &mut Rng) -> Value {
            match r.below(5) {
                0 => Value::Bool(r.next() & 1 == 0),
                1 => Value::Int(((r.next() as i128) << 64 | r.next() as i128) >> r.below(128)),
                2 => loop {
                    let x = f64::from_bits(r.next());
                    if !x.is_nan() {
                        break Value::Float(x);
                    }
                },
                3 => Value::Str((0..r.below(6)).map(|_| TEXT[r.below(12)]).collect()),
                _ => Value::Duration(((r.next() as i128) << 64 | r.next() as i128) >> r.below(128)),
            }
        }
        fn filter(r: &mut Rng, depth: u32) -> Filter {
            let c = col(COLUMNS[r.below(8)]);
            match if depth == 0 { r.below(5) } else { r.below(8) } {
                0 => {
                    let v = value(r);
                    match r.below(6) {
                        0 => c.eq(v),
                        1 => c.ne(v),
                        2 => c.lt(v),
                        3 => c.le(v),
                        4 => c.gt(v),
                        _ => c.ge(v),
                    }
                }
                1 => c.between(value(r), value(r)),
                2 => c.is_in((0..r.below(4)).map(|_| value(r)).collect::<Vec<_>>()),
                3 => c.is_null(),
                4 => c.is_not_null(),
                5 => filter(r, depth - 1) & filter(r, depth - 1),
                6 => filter(r, depth - 1) | filter(r, depth - 1),
                _ => !filter(r, depth - 1),
            }
        }
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..2000 {
            round_trip(&filter(&mut r, 4));
        }
    }
}
