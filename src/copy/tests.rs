use super::*;
use heapdb_grammar::ast::{CopyFormat, CopyOption};

fn opts(o: &[CopyOption]) -> CopyOptions {
    CopyOptions::from_ast(o, true).expect("valid options")
}

fn fields(line: &[u8], o: &CopyOptions) -> Vec<Option<String>> {
    let (mut buf, mut f) = (Vec::new(), Vec::new());
    match o.format {
        Format::Text => text::split(line, o, &mut buf, &mut f),
        Format::Csv => csv::split(line, o, &[], &mut buf, &mut f),
    }
    f.iter()
        .map(|r| r.map(|(s, e)| String::from_utf8(buf[s..e].to_vec()).expect("utf8")))
        .collect()
}

fn s(x: &str) -> Option<String> {
    Some(x.to_string())
}

#[test]
fn text_split_escapes_and_null() {
    let o = opts(&[]);
    assert_eq!(
        fields(b"a\\tb\t\\N\t\\\\N\t\\101\\x41\\q\t", &o),
        vec![s("a\tb"), None, s("\\N"), s("AAq"), s("")]
    );
    assert_eq!(fields(b"", &o), vec![s("")]);
    assert_eq!(fields(b"x\\\ny", &o), vec![s("x\ny")]);
}

#[test]
fn text_write_escapes_like_postgres() {
    let mut out = Vec::new();
    text::write_field(b"a\tb\nc\\d\x08\x0b\x0c\r|\x01", b'|', &mut out);
    assert_eq!(out, b"a\\tb\\nc\\\\d\\b\\v\\f\\r\\|\x01");
}

#[test]
fn csv_split_quotes_null_and_empty() {
    let o = opts(&[CopyOption::Format(CopyFormat::Csv)]);
    assert_eq!(
        fields(b"1,,\"\",\"a,\"\"b\"\"\",x\"y\"z", &o),
        vec![s("1"), None, s(""), s("a,\"b\""), s("xyz")]
    );
    let e = opts(&[
        CopyOption::Format(CopyFormat::Csv),
        CopyOption::Escape("\\".into()),
    ]);
    assert_eq!(fields(b"\"a\\\"b\\\\\"", &e), vec![s("a\"b\\")]);
}

#[test]
fn csv_write_quotes_when_needed() {
    let o = opts(&[CopyOption::Format(CopyFormat::Csv)]);
    let w = |v: &[u8], single| {
        let mut out = Vec::new();
        csv::write_field(v, &o, false, single, &mut out);
        String::from_utf8(out).expect("utf8")
    };
    assert_eq!(w(b"plain", false), "plain");
    assert_eq!(w(b"", false), "\"\"");
    assert_eq!(w(b"a\"b", false), "\"a\"\"b\"");
    assert_eq!(w(b"a\nb", false), "\"a\nb\"");
    assert_eq!(w(b"\\.", true), "\"\\.\"");
    assert_eq!(w(b"\\.", false), "\\.");
}

#[test]
fn records_span_lines_inside_quotes_and_escaped_newlines() {
    let o = opts(&[CopyOption::Format(CopyFormat::Csv)]);
    let mut input: &[u8] = b"1,\"a\nb\"\r\n2,x\n";
    let mut line = Vec::new();
    assert!(read_record(&mut input, &o, &mut line).expect("read"));
    assert_eq!(line, b"1,\"a\nb\"");
    assert!(read_record(&mut input, &o, &mut line).expect("read"));
    assert_eq!(line, b"2,x");
    assert!(!read_record(&mut input, &o, &mut line).expect("read"));
    let mut bad: &[u8] = b"1,\"open\n";
    let e = read_record(&mut bad, &o, &mut line).expect_err("unterminated");
    assert_eq!(e.message, "unterminated CSV quoted field");
}

#[test]
fn option_conflicts_use_postgres_messages() {
    let e = |o: &[CopyOption], from| {
        CopyOptions::from_ast(o, from)
            .expect_err("conflict")
            .message
    };
    assert_eq!(
        e(&[CopyOption::Quote("'".into())], true),
        "COPY quote available only in CSV mode"
    );
    assert_eq!(
        e(&[CopyOption::Delimiter("ab".into())], true),
        "COPY delimiter must be a single one-byte character"
    );
    assert_eq!(
        e(&[CopyOption::Header(true), CopyOption::Header(false)], true),
        "conflicting or redundant options"
    );
    assert_eq!(
        e(
            &[
                CopyOption::Delimiter(",".into()),
                CopyOption::Null("a,b".into())
            ],
            true
        ),
        "COPY delimiter must not appear in the NULL specification"
    );
    assert_eq!(
        e(
            &[
                CopyOption::Format(CopyFormat::Csv),
                CopyOption::ForceQuote(vec![])
            ],
            true
        ),
        "COPY force quote only available using COPY TO"
    );
}

#[test]
fn display_is_limited() {
    assert_eq!(limit_display(b"abc"), "abc");
    let long = "é".repeat(80);
    let shown = limit_display(long.as_bytes());
    assert!(shown.ends_with("...") && shown.len() <= MAX_DISPLAY + 3);
}
