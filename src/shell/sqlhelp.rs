//! `\h`: SQL syntax help drawn from the grammar's EBNF
//! ([`heapdb_grammar::EBNF`]), laid out as psql's `\h` (Command,
//! Description, Syntax, then "where ... is one of:" for the statement's own
//! sub-rules).
//!
//! The topics are the alternatives of the grammar's `statement` rule, named
//! after their rule (`create_table` is CREATE TABLE, `query` is SELECT) or
//! their keyword (`"CHECKPOINT"`). A synopsis is the rule's text with the
//! EBNF turned into psql's notation: terminals unquoted, `( a | b )` as
//! `{ a | b }`, `x { "," x }` as `x [, ...]`, other repetitions `{ x }` as
//! `[ x ... ]`, comments dropped, and the rule's own line breaks kept. Only
//! the one-line descriptions are written here (the grammar has none); they
//! are PostgreSQL's.

use std::collections::{HashMap, HashSet};

/// One rule of the EBNF: its name and its definition (comments removed,
/// line breaks kept, the final `;` dropped).
#[derive(Debug, Clone)]
struct Rule {
    name: String,
    body: String,
}

/// psql's one-line description of a statement, by topic.
const DESCRIPTIONS: &[(&str, &str)] = &[
    (
        "ALTER SEQUENCE",
        "change the definition of a sequence generator",
    ),
    ("ALTER TABLE", "change the definition of a table"),
    ("ANALYZE", "collect statistics about a database"),
    ("BEGIN", "start a transaction block"),
    ("CHECKPOINT", "force a write-ahead log checkpoint"),
    ("COMMENT", "define or change the comment of an object"),
    ("COMMIT", "commit the current transaction"),
    ("COPY", "copy data between a file and a table"),
    ("CREATE INDEX", "define a new index"),
    ("CREATE SEQUENCE", "define a new sequence generator"),
    ("CREATE TABLE", "define a new table"),
    (
        "CREATE TABLE AS",
        "define a new table from the results of a query",
    ),
    ("CREATE VIEW", "define a new view"),
    ("DELETE", "delete rows of a table"),
    ("DROP INDEX", "remove an index"),
    ("DROP SEQUENCE", "remove a sequence"),
    ("DROP TABLE", "remove a table"),
    ("DROP VIEW", "remove a view"),
    ("EXPLAIN", "show the execution plan of a statement"),
    ("INSERT", "create new rows in a table"),
    ("REINDEX", "rebuild indexes"),
    (
        "RESET",
        "restore the value of a run-time parameter to the default value",
    ),
    ("ROLLBACK", "abort the current transaction"),
    ("SELECT", "retrieve rows from a table or view"),
    ("SET", "change a run-time parameter"),
    (
        "SET TRANSACTION",
        "set the characteristics of the current transaction",
    ),
    ("SHOW", "show the value of a run-time parameter"),
    ("TRUNCATE", "empty a table or set of tables"),
    ("UPDATE", "update rows of a table"),
    (
        "VACUUM",
        "garbage-collect and optionally analyze a database",
    ),
];

/// Rules from `expr` on (expressions, types, tokens) and the other
/// statements are referred to by name, not spelled out under a statement.
const FIRST_GENERAL_RULE: &str = "expr";

/// Removes `(* ... *)` comments outside quotes.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                out.push(c);
                if c == q {
                    quote = None;
                }
            }
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                out.push(c);
            }
            None if c == '(' && chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = ' ';
                for d in chars.by_ref() {
                    if prev == '*' && d == ')' {
                        break;
                    }
                    prev = d;
                }
            }
            None => out.push(c),
        }
    }
    out
}

/// The rules of `ebnf`, in file order.
fn rules(ebnf: &str) -> Vec<Rule> {
    let text = strip_comments(ebnf);
    let mut out: Vec<Rule> = Vec::new();
    let mut current: Option<Rule> = None;
    for line in text.lines() {
        let starts_rule = line
            .split_once('=')
            .filter(|(name, _)| {
                let n = name.trim_end();
                !line.starts_with(' ')
                    && !n.is_empty()
                    && n.chars().all(|c| c.is_ascii_lowercase() || c == '_')
            })
            .map(|(name, rest)| (name.trim_end().to_string(), rest.to_string()));
        let piece = match starts_rule {
            Some((name, rest)) => {
                if let Some(r) = current.take() {
                    out.push(r);
                }
                current = Some(Rule {
                    name,
                    body: String::new(),
                });
                rest
            }
            None => line.to_string(),
        };
        let Some(r) = current.as_mut() else { continue };
        let (piece, ends) = match final_semicolon(&piece) {
            Some(i) => (piece[..i].to_string(), true),
            None => (piece, false),
        };
        if !piece.trim().is_empty() {
            if !r.body.is_empty() {
                r.body.push('\n');
            }
            r.body.push_str(piece.trim_end());
        }
        if ends {
            out.push(current.take().expect("a rule is open"));
        }
    }
    out.extend(current);
    out
}

/// The byte index of a `;` that ends `line` outside quotes, if any.
fn final_semicolon(line: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut last = None;
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == ';' => last = Some(i),
            None if !c.is_whitespace() => last = None,
            None => {}
        }
    }
    last
}

/// A token of a rule body.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    /// A quoted terminal, unquoted.
    Term(String),
    /// A rule name.
    Name(String),
    /// `( ) [ ] { } |` of the notation.
    Punct(char),
    /// A line break of the source.
    Newline,
}

fn tokens(body: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let b: Vec<char> = body.chars().collect();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            '\n' => {
                out.push(Tok::Newline);
                i += 1;
            }
            '"' | '\'' => {
                let end = (i + 1..b.len()).find(|&j| b[j] == c).unwrap_or(b.len());
                out.push(Tok::Term(b[i + 1..end].iter().collect()));
                i = end + 1;
            }
            '(' | ')' | '[' | ']' | '{' | '}' | '|' => {
                out.push(Tok::Punct(c));
                i += 1;
            }
            c if c.is_alphanumeric() || c == '_' => {
                let end = (i..b.len())
                    .find(|&j| !(b[j].is_alphanumeric() || b[j] == '_'))
                    .unwrap_or(b.len());
                out.push(Tok::Name(b[i..end].iter().collect()));
                i = end;
            }
            _ => i += 1,
        }
    }
    out
}

/// The index of the bracket closing the one at `open`.
fn closing(toks: &[Tok], open: usize) -> usize {
    let mut depth = 0;
    for (j, t) in toks.iter().enumerate().skip(open) {
        match t {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    toks.len()
}

/// Renders tokens in psql's notation (see the module doc).
fn render(toks: &[Tok], out: &mut Vec<String>) {
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Term(t) => out.push(t.clone()),
            Tok::Name(n) => out.push(n.clone()),
            Tok::Newline => out.push("\n".into()),
            Tok::Punct('|') => out.push("|".into()),
            Tok::Punct(open @ ('(' | '[' | '{')) => {
                let close = closing(toks, i);
                let inner = &toks[i + 1..close.min(toks.len())];
                match open {
                    '[' => {
                        out.push("[".into());
                        render(inner, out);
                        out.push("]".into());
                    }
                    '(' => {
                        out.push("{".into());
                        render(inner, out);
                        out.push("}".into());
                    }
                    _ => {
                        // `x { "," x }` reads `x [, ...]`.
                        let mut body = Vec::new();
                        render(inner, &mut body);
                        let item = body.get(1..).unwrap_or_default();
                        if body.first().map(String::as_str) == Some(",")
                            && !item.is_empty()
                            && out.ends_with(item)
                        {
                            out.push("[, ...]".into());
                        } else {
                            out.push("[".into());
                            out.extend(body);
                            out.push("...".into());
                            out.push("]".into());
                        }
                    }
                }
                i = close;
            }
            Tok::Punct(_) => {}
        }
        i += 1;
    }
}

/// The rendered text of a rule body: the source's lines, continuation lines
/// indented by four spaces.
fn synopsis(body: &str, indent: &str) -> String {
    let mut words = Vec::new();
    render(&tokens(body), &mut words);
    let mut lines: Vec<String> = vec![String::new()];
    for w in words {
        if w == "\n" {
            lines.push(String::new());
            continue;
        }
        let l = lines.last_mut().expect("one line at least");
        if !l.is_empty() && w != "," {
            l.push(' ');
        }
        l.push_str(&w);
    }
    lines.retain(|l| !l.is_empty());
    let mut s = String::new();
    for (k, l) in lines.iter().enumerate() {
        s.push_str(indent);
        if k > 0 {
            s.push_str("    ");
        }
        s.push_str(l);
        s.push('\n');
    }
    s
}

/// The grammar's help: topics and their rules.
pub struct SqlHelp {
    /// The rules, in file order.
    rules: Vec<Rule>,
    /// Topic name and the rule (or keyword) it comes from.
    topics: Vec<(String, String)>,
}

impl SqlHelp {
    /// The help for heapdb's grammar.
    pub fn new() -> SqlHelp {
        SqlHelp::from_ebnf(heapdb_grammar::EBNF)
    }

    fn from_ebnf(ebnf: &str) -> SqlHelp {
        let rules = rules(ebnf);
        let mut topics = Vec::new();
        if let Some(stmt) = rules.iter().find(|r| r.name == "statement") {
            for t in tokens(&stmt.body) {
                let (topic, source) = match t {
                    Tok::Name(n) if n == "query" => ("SELECT".to_string(), n),
                    Tok::Name(n) => (n.replace('_', " ").to_uppercase(), n),
                    Tok::Term(k) => (k.clone(), k),
                    _ => continue,
                };
                topics.push((topic, source));
            }
        }
        topics.sort();
        SqlHelp { rules, topics }
    }

    /// The topic names, sorted.
    pub fn topics(&self) -> impl Iterator<Item = &str> {
        self.topics.iter().map(|(t, _)| t.as_str())
    }

    /// The `\h` text for `topic` (all topics whose name starts with it,
    /// psql's rule), or the list of topics.
    pub fn help(&self, topic: Option<&str>) -> String {
        let Some(topic) = topic
            .map(|t| {
                t.split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .to_uppercase()
            })
            .filter(|t| !t.is_empty() && t != "*")
        else {
            return self.list();
        };
        let exact: Vec<_> = self.topics.iter().filter(|(t, _)| *t == topic).collect();
        let chosen = if exact.is_empty() {
            self.topics
                .iter()
                .filter(|(t, _)| t.starts_with(&topic))
                .collect()
        } else {
            exact
        };
        if chosen.is_empty() {
            return format!(
                "No help available for \"{}\".\nTry \\h with no arguments to see available help.\n",
                topic.to_lowercase()
            );
        }
        chosen.iter().map(|(t, src)| self.page(t, src)).collect()
    }

    /// `Available help:` and the topics in two columns, as psql.
    fn list(&self) -> String {
        let names: Vec<&str> = self.topics().collect();
        let width = names.iter().map(|n| n.len()).max().unwrap_or(0) + 2;
        let rows = names.len().div_ceil(2);
        let mut s = String::from("Available help:\n");
        for r in 0..rows {
            s.push_str("  ");
            let left = names[r];
            match names.get(r + rows) {
                Some(right) => s.push_str(&format!("{left:<width$}{right}\n")),
                None => s.push_str(&format!("{left}\n")),
            }
        }
        s
    }

    /// One topic's page.
    fn page(&self, topic: &str, source: &str) -> String {
        let description = DESCRIPTIONS
            .iter()
            .find(|(t, _)| *t == topic)
            .map_or("", |(_, d)| d);
        let mut s = format!("Command:     {topic}\nDescription: {description}\nSyntax:\n");
        let by_name: HashMap<&str, usize> = self
            .rules
            .iter()
            .enumerate()
            .map(|(i, r)| (r.name.as_str(), i))
            .collect();
        let Some(&root) = by_name.get(source) else {
            // A bare keyword statement.
            s.push_str(source);
            s.push_str("\n\n");
            return s;
        };
        s.push_str(&synopsis(&self.rules[root].body, ""));
        // The statement's own sub-rules, in order of first use.
        let general = by_name
            .get(FIRST_GENERAL_RULE)
            .copied()
            .unwrap_or(usize::MAX);
        let statements: HashSet<&str> = self.topics.iter().map(|(_, r)| r.as_str()).collect();
        let query_rules = self.query_rules(&by_name);
        let mut seen = HashSet::from([root]);
        let mut queue = vec![root];
        let mut k = 0;
        while k < queue.len() {
            for t in tokens(&self.rules[queue[k]].body) {
                let Tok::Name(n) = t else { continue };
                let Some(&i) = by_name.get(n.as_str()) else {
                    continue;
                };
                let in_query = query_rules.contains(&i) && source != "query";
                if i >= general || statements.contains(n.as_str()) || in_query || !seen.insert(i) {
                    continue;
                }
                queue.push(i);
            }
            k += 1;
        }
        for &i in &queue[1..] {
            let rule = &self.rules[i];
            let alts = top_alternatives(&rule.body);
            if alts.len() > 1 && alts.iter().all(|a| !a.contains(' ')) {
                // Single words read best on one line: `true | false | ...`.
                let words: Vec<String> = alts.iter().map(|a| synopsis(a, "")).collect();
                let words: Vec<&str> = words.iter().map(|w| w.trim_end()).collect();
                s.push_str(&format!(
                    "\nwhere {} is:\n\n    {}\n",
                    rule.name,
                    words.join(" | ")
                ));
            } else if alts.len() > 1 {
                s.push_str(&format!("\nwhere {} is one of:\n\n", rule.name));
                for a in alts {
                    s.push_str(&synopsis(&a, "    "));
                }
            } else {
                s.push_str(&format!("\nwhere {} is:\n\n", rule.name));
                s.push_str(&synopsis(&rule.body, "    "));
            }
        }
        s.push('\n');
        s
    }

    /// The rules of the query section (from `query` up to the first DML
    /// rule), shown only under SELECT.
    fn query_rules(&self, by_name: &HashMap<&str, usize>) -> HashSet<usize> {
        let start = by_name.get("query").copied().unwrap_or(0);
        let end = by_name.get("insert").copied().unwrap_or(start);
        (start..end).collect()
    }
}

impl Default for SqlHelp {
    fn default() -> Self {
        SqlHelp::new()
    }
}

/// The top-level `|` alternatives of a rule body, each on one line.
fn top_alternatives(body: &str) -> Vec<String> {
    let mut alts = vec![String::new()];
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    for c in body.chars() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth -= 1,
            (None, '|') if depth == 0 => {
                alts.push(String::new());
                continue;
            }
            (None, '\n') => {
                alts.last_mut().expect("one").push(' ');
                continue;
            }
            _ => {}
        }
        alts.last_mut().expect("one").push(c);
    }
    alts.into_iter()
        .map(|a| a.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|a| !a.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_statement_kind_is_a_topic_with_a_description() {
        let h = SqlHelp::new();
        let topics: Vec<&str> = h.topics().collect();
        for t in [
            "SELECT",
            "COPY",
            "CREATE TABLE",
            "CREATE TABLE AS",
            "VACUUM",
            "CHECKPOINT",
        ] {
            assert!(topics.contains(&t), "{t} in {topics:?}");
        }
        for t in &topics {
            assert!(
                DESCRIPTIONS.iter().any(|(d, _)| d == t),
                "no description for {t}"
            );
        }
        let list = h.help(None);
        assert!(
            list.starts_with("Available help:\n  ALTER SEQUENCE "),
            "{list}"
        );
    }

    #[test]
    fn synopses_follow_the_grammar_in_psql_notation() {
        let h = SqlHelp::new();
        assert_eq!(
            h.help(Some("drop   table")),
            "Command:     DROP TABLE\nDescription: remove a table\nSyntax:\n\
             DROP TABLE [ IF EXISTS ] object_name [, ...]\n    [ CASCADE | RESTRICT ]\n\n"
        );
        assert_eq!(
            h.help(Some("truncate")),
            "Command:     TRUNCATE\nDescription: empty a table or set of tables\nSyntax:\n\
             TRUNCATE [ TABLE ] [ ONLY ] object_name [, ...]\n    [ CASCADE | RESTRICT ]\n\n"
        );
        let copy = h.help(Some("copy"));
        assert!(
            copy.contains("\nwhere copy_option is one of:\n\n    FORMAT { text | csv | binary }\n"),
            "{copy}"
        );
        assert!(copy.contains("COPY [ BINARY ] { object_name [ ( col_id [, ...] ) ] | ( query ) }\n    { FROM | TO } { string | STDIN | STDOUT }\n"), "{copy}");
        assert!(
            copy.contains("\nwhere boolean is:\n\n    true | false | on | off | 1 | 0\n"),
            "{copy}"
        );
        // The statement's own rules only: no expression grammar.
        assert!(!copy.contains("where expr"), "{copy}");
        assert_eq!(h.help(Some("checkpoint")), "Command:     CHECKPOINT\nDescription: force a write-ahead log checkpoint\nSyntax:\nCHECKPOINT\n\n");
    }

    #[test]
    fn prefixes_match_several_and_unknown_topics_say_so() {
        let h = SqlHelp::new();
        let create = h.help(Some("create"));
        assert!(create.contains("Command:     CREATE TABLE\n"));
        assert!(create.contains("Command:     CREATE TABLE AS\n"));
        // An exact name shows only that topic.
        assert_eq!(h.help(Some("create table")).matches("Command:").count(), 1);
        assert_eq!(
            h.help(Some("nosuch")),
            "No help available for \"nosuch\".\nTry \\h with no arguments to see available help.\n"
        );
    }

    #[test]
    fn comments_and_quoted_specials_survive_rule_splitting() {
        let r = rules("a = \"(*\" b ; (* c = d ; *)\nb = \";\" | x\n  | y ;\n");
        let names: Vec<&str> = r.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(r[1].body.trim(), "\";\" | x\n  | y");
    }
}
