//! Tests of the `--where` parser and printer: round trips, precedence,
//! values of every type, and errors saying where and what.

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
    assert!(error(&nots(100_000)).starts_with("--where: at 801: the filter nests more than 200"));
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
