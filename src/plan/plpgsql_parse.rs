//! The PL/pgSQL parser: a function body's text into [`Block`]s of
//! [`RawStmt`]s whose expressions and queries are still source text (the
//! compiler in [`super::userfunc`] binds them).
//!
//! The statements read are PostgreSQL's `pl_gram.y` subset heapdb runs:
//! assignment, `IF`, `RETURN`, `RAISE` (levels, `USING` options,
//! conditions), `NULL`, `LOOP` / `WHILE` / `FOR` (integer range or query)
//! / `FOREACH ... IN ARRAY` with labels, `EXIT` / `CONTINUE` [`WHEN`],
//! `SELECT ... INTO [STRICT]`, `PERFORM`, `ASSERT`, `GET DIAGNOSTICS`
//! and nested `[DECLARE] BEGIN ... [EXCEPTION WHEN ...] END` blocks.
//! Anything else is 0A000 naming the statement.
//!
//! Invariant: each statement carries the body line its first token is on
//! (1 is the line the body text starts on), as PostgreSQL's CONTEXT lines
//! count them.

use heapdb_grammar::lexer::{tokenize, Token, TokenKind};

use crate::err;
use crate::error::{Error, Result};
use crate::exec::plpgsql::RaiseLevel;

/// A PL/pgSQL block as parsed, its expressions still text.
#[derive(Debug, Default)]
pub struct Block {
    /// `<<label>>` before it, if any.
    pub label: Option<String>,
    /// The `DECLARE`d variables.
    pub decls: Vec<Decl>,
    /// The statements between `BEGIN` and `EXCEPTION` / `END`.
    pub body: Vec<RawStmt>,
    /// `WHEN cond [OR cond ...] THEN stmts` handlers.
    pub handlers: Vec<(Vec<String>, Vec<RawStmt>)>,
}

/// One `DECLARE`d variable.
#[derive(Debug)]
pub struct Decl {
    /// Its name (case-folded).
    pub name: String,
    /// Its type as written (`integer`, `record`, `t.a%TYPE`).
    pub type_text: String,
    /// Its initial value's expression text.
    pub default: Option<String>,
}

/// What a loop iterates over.
#[derive(Debug)]
pub enum LoopKind {
    /// `LOOP`.
    Plain,
    /// `WHILE cond LOOP`.
    While(String),
    /// `FOR var IN [REVERSE] lo .. hi [BY step] LOOP`.
    Range {
        var: String,
        reverse: bool,
        lo: String,
        hi: String,
        step: Option<String>,
    },
    /// `FOR var IN query LOOP`.
    Query { var: String, query: String },
    /// `FOREACH var IN ARRAY expr LOOP`.
    Foreach { var: String, array: String },
}

/// `RAISE`'s parts.
#[derive(Debug)]
pub struct RawRaise {
    pub level: RaiseLevel,
    /// The format string (`None`: a condition, or a message in `USING`).
    pub format: Option<String>,
    pub args: Vec<String>,
    /// `RAISE condition_name` / `RAISE SQLSTATE 'xxxxx'`.
    pub condition: Option<String>,
    /// `USING name = expr`, names lower-cased.
    pub options: Vec<(String, String)>,
}

/// `INTO [STRICT] target, ...` of a SELECT.
#[derive(Debug)]
pub struct Into {
    pub targets: Vec<String>,
    pub strict: bool,
}

/// One statement, its expressions still text; the first field is its line.
#[derive(Debug)]
pub enum RawStmt {
    Assign(u32, String, String),
    Return(u32, Option<String>),
    If(u32, Vec<(String, Vec<RawStmt>)>, Vec<RawStmt>),
    Raise(u32, RawRaise),
    Null,
    /// A loop: its label, what it iterates, its body.
    Loop(u32, Option<String>, LoopKind, Vec<RawStmt>),
    /// `EXIT` (false) or `CONTINUE` (true), its label and `WHEN` condition.
    Exit(u32, bool, Option<String>, Option<String>),
    /// A query: `SELECT ... [INTO ...]` or `PERFORM` (as `SELECT`, no
    /// INTO; the flag is set).
    Sql(u32, String, Option<Into>, bool),
    /// A nested block.
    Block(u32, Box<Block>),
    /// `ASSERT cond [, message]`.
    Assert(u32, String, Option<String>),
    /// `GET DIAGNOSTICS var = item, ...`.
    GetDiagnostics(u32, Vec<(String, String)>),
}

/// The tokens of a PL/pgSQL body and a cursor over them.
struct Lexed<'s> {
    src: &'s str,
    toks: Vec<Token>,
    pos: usize,
}

/// A syntax error near `near` (at the end of input when empty).
pub fn syntax(near: &str) -> Error {
    if near.is_empty() {
        err!(SyntaxError, "syntax error at end of input")
    } else {
        err!(SyntaxError, "syntax error at or near \"{near}\"")
    }
}

impl<'s> Lexed<'s> {
    fn text(&self, k: usize) -> &'s str {
        self.toks
            .get(k)
            .map(|t| &self.src[t.start..t.end])
            .unwrap_or("")
    }
    fn kind(&self, k: usize) -> Option<TokenKind> {
        self.toks.get(k).map(|t| t.kind)
    }
    fn is_word(&self, k: usize, w: &str) -> bool {
        self.text(k).eq_ignore_ascii_case(w) && matches!(self.kind(k), Some(TokenKind::Word(_)))
    }
    fn peek_is(&self, w: &str) -> bool {
        self.is_word(self.pos, w)
    }
    fn eat(&mut self, w: &str) -> bool {
        if self.peek_is(w) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, w: &str) -> Result<()> {
        if self.eat(w) {
            Ok(())
        } else {
            Err(syntax(self.text(self.pos)))
        }
    }
    fn at_semicolon(&self) -> bool {
        matches!(self.kind(self.pos), Some(TokenKind::Semicolon))
    }
    fn semicolon(&mut self) -> Result<()> {
        if self.at_semicolon() {
            self.pos += 1;
            Ok(())
        } else {
            Err(syntax(self.text(self.pos)))
        }
    }
    /// The body line of the token at the cursor (1 is the first).
    fn line(&self) -> u32 {
        let at = self
            .toks
            .get(self.pos)
            .map(|t| t.start)
            .unwrap_or(self.src.len());
        self.src[..at].bytes().filter(|&b| b == b'\n').count() as u32 + 1
    }
    fn at_end(&self) -> bool {
        matches!(self.kind(self.pos), None | Some(TokenKind::Eof))
    }

    /// The source text from the cursor up to (not including) the first
    /// token at parenthesis depth 0 that `stop` accepts; the cursor is
    /// left on that token. `CASE ... END` pairs are skipped whole.
    fn until(&mut self, stop: &dyn Fn(&Lexed<'s>, usize) -> bool) -> Result<String> {
        let start = self.pos;
        let (mut depth, mut cases) = (0usize, 0usize);
        while !self.at_end() {
            let k = self.pos;
            match self.toks[k].kind {
                TokenKind::LParen | TokenKind::LBracket => depth += 1,
                TokenKind::RParen | TokenKind::RBracket => depth = depth.saturating_sub(1),
                _ if depth == 0 && cases == 0 && stop(self, k) => break,
                TokenKind::Word(_) if self.is_word(k, "case") => cases += 1,
                TokenKind::Word(_) if self.is_word(k, "end") && cases > 0 => cases -= 1,
                _ => {}
            }
            self.pos += 1;
        }
        if self.pos == start {
            return Err(syntax(self.text(self.pos)));
        }
        Ok(self.span(start, self.pos))
    }

    /// The source text of tokens `a..b`.
    fn span(&self, a: usize, b: usize) -> String {
        if b <= a {
            return String::new();
        }
        self.src[self.toks[a].start..self.toks[b - 1].end].to_string()
    }

    /// `<<label>>`, if at the cursor.
    fn label(&mut self) -> Result<Option<String>> {
        if self.text(self.pos) == "<<" {
            self.pos += 1;
            let name = ident(self)?;
            if self.text(self.pos) != ">>" {
                return Err(syntax(self.text(self.pos)));
            }
            self.pos += 1;
            return Ok(Some(name));
        }
        Ok(None)
    }
}

/// How many tokens the assignment operator at `k` spans (`:=` is lexed
/// as `:` and `=`; a lone `=` is PL/pgSQL's other spelling), or 0.
fn assign_op(l: &Lexed<'_>, k: usize) -> usize {
    match l.text(k) {
        ":=" | "=" => 1,
        ":" if l.text(k + 1) == "="
            && l.toks.get(k + 1).map(|t| t.start) == l.toks.get(k).map(|t| t.end) =>
        {
            2
        }
        _ => 0,
    }
}

fn is_semicolon(l: &Lexed<'_>, k: usize) -> bool {
    l.toks[k].kind == TokenKind::Semicolon
}

fn word_stop(words: &'static [&'static str]) -> impl Fn(&Lexed<'_>, usize) -> bool {
    move |l: &Lexed<'_>, k: usize| words.iter().any(|w| l.is_word(k, w))
}

/// Parses a function body: `[<<label>>] [DECLARE decl...] BEGIN stmt...
/// [EXCEPTION ...] END [;]`.
pub fn parse_block(body: &str) -> Result<Block> {
    let mut l = Lexed {
        src: body,
        toks: tokenize(body),
        pos: 0,
    };
    if let Some(t) = l
        .toks
        .iter()
        .find(|t| matches!(t.kind, TokenKind::Error(_)))
    {
        return Err(syntax(&body[t.start..t.end]));
    }
    let label = l.label()?;
    let block = block(&mut l, label)?;
    if !l.at_end() {
        l.semicolon()?;
    }
    if !l.at_end() {
        return Err(syntax(l.text(l.pos)));
    }
    let mut labels = Vec::new();
    check_exits(&block, &mut labels)?;
    Ok(block)
}

/// Checks every `EXIT` / `CONTINUE` names an enclosing label (a loop's
/// for `CONTINUE`) or, without one, is inside a loop, as PostgreSQL's
/// parser does. `labels`: the enclosing (label, is a loop), innermost last.
fn check_exits(b: &Block, labels: &mut Vec<(Option<String>, bool)>) -> Result<()> {
    labels.push((b.label.clone(), false));
    let r = b
        .body
        .iter()
        .chain(b.handlers.iter().flat_map(|h| &h.1))
        .try_for_each(|s| check_stmt(s, labels));
    labels.pop();
    r
}

fn check_stmt(s: &RawStmt, labels: &mut Vec<(Option<String>, bool)>) -> Result<()> {
    match s {
        RawStmt::If(_, arms, otherwise) => arms
            .iter()
            .flat_map(|a| &a.1)
            .chain(otherwise)
            .try_for_each(|s| check_stmt(s, labels)),
        RawStmt::Loop(_, label, _, body) => {
            labels.push((label.clone(), true));
            let r = body.iter().try_for_each(|s| check_stmt(s, labels));
            labels.pop();
            r
        }
        RawStmt::Block(_, b) => check_exits(b, labels),
        RawStmt::Exit(_, cont, label, _) => match label {
            None if !labels.iter().any(|(_, is_loop)| *is_loop) => Err(if *cont {
                err!(SyntaxError, "CONTINUE cannot be used outside a loop")
            } else {
                err!(
                    SyntaxError,
                    "EXIT cannot be used outside a loop, unless it has a label"
                )
            }),
            None => Ok(()),
            Some(l) => match labels.iter().rev().find(|(x, _)| x.as_deref() == Some(l)) {
                None => Err(err!(
                    SyntaxError,
                    "there is no label \"{l}\" attached to any block or loop enclosing this statement"
                )),
                Some((_, false)) if *cont => Err(err!(
                    SyntaxError,
                    "block label \"{l}\" cannot be used in CONTINUE"
                )),
                Some(_) => Ok(()),
            },
        },
        _ => Ok(()),
    }
}

/// `[DECLARE ...] BEGIN ... [EXCEPTION ...] END [label]` (no semicolon).
fn block(l: &mut Lexed<'_>, label: Option<String>) -> Result<Block> {
    let mut b = Block {
        label,
        ..Block::default()
    };
    if l.eat("declare") {
        while !l.peek_is("begin") && !l.at_end() {
            b.decls.push(parse_decl(l)?);
        }
    }
    l.expect("begin")?;
    b.body = parse_stmts(l, &["end", "exception"])?;
    if l.eat("exception") {
        while l.eat("when") {
            let mut conds = Vec::new();
            loop {
                let c = ident(l)?;
                if c == "sqlstate" {
                    let code = string_literal(l)?;
                    conds.push(format!("sqlstate {code}"));
                } else {
                    conds.push(c);
                }
                if !l.eat("or") {
                    break;
                }
            }
            l.expect("then")?;
            let body = parse_stmts(l, &["when", "end"])?;
            b.handlers.push((conds, body));
        }
        if b.handlers.is_empty() {
            return Err(syntax(l.text(l.pos)));
        }
    }
    l.expect("end")?;
    end_label(l, &b.label)?;
    Ok(b)
}

/// An optional label after `END` / `END LOOP`, which must match.
fn end_label(l: &mut Lexed<'_>, label: &Option<String>) -> Result<()> {
    if matches!(
        l.kind(l.pos),
        Some(TokenKind::Word(_)) | Some(TokenKind::QuotedIdent(_))
    ) {
        let name = ident(l)?;
        if label.as_deref() != Some(name.as_str()) {
            return Err(match label {
                None => err!(
                    SyntaxError,
                    "end label \"{name}\" specified for unlabeled block"
                ),
                Some(lab) => err!(
                    SyntaxError,
                    "end label \"{name}\" differs from block's label \"{lab}\""
                ),
            });
        }
    }
    Ok(())
}

fn string_literal(l: &mut Lexed<'_>) -> Result<String> {
    let k = l.pos;
    match l.kind(k) {
        Some(TokenKind::String(..)) => {
            let s = match super::userfunc::parse_expr(l.text(k))?.kind {
                heapdb_grammar::ast::ExprKind::Literal(heapdb_grammar::ast::Literal::String(s)) => {
                    s
                }
                _ => return Err(syntax(l.text(k))),
            };
            l.pos += 1;
            Ok(s)
        }
        _ => Err(syntax(l.text(k))),
    }
}

fn parse_decl(l: &mut Lexed<'_>) -> Result<Decl> {
    let name = ident(l)?;
    l.eat("constant");
    let type_text = l.until(&|l, k| {
        is_semicolon(l, k)
            || assign_op(l, k) > 0
            || ["default", "not"].iter().any(|w| l.is_word(k, w))
    })?;
    if l.eat("not") {
        l.expect("null")?;
    }
    let op = assign_op(l, l.pos);
    let default = if op > 0 || l.eat("default") {
        l.pos += op;
        Some(l.until(&is_semicolon)?)
    } else {
        None
    };
    l.semicolon()?;
    Ok(Decl {
        name,
        type_text,
        default,
    })
}

/// A name (folded to lower case unless quoted).
fn ident(l: &mut Lexed<'_>) -> Result<String> {
    let k = l.pos;
    let t = l.toks.get(k).ok_or_else(|| syntax(""))?;
    let text = l.text(k);
    let name = match t.kind {
        TokenKind::Word(_) => text.to_lowercase(),
        TokenKind::QuotedIdent(_) => text[1..text.len() - 1].replace("\"\"", "\""),
        _ => return Err(syntax(text)),
    };
    l.pos += 1;
    Ok(name)
}

/// Statements up to (not including) one of the words `ends`.
fn parse_stmts(l: &mut Lexed<'_>, ends: &[&str]) -> Result<Vec<RawStmt>> {
    let mut out = Vec::new();
    loop {
        if l.at_end() {
            return Err(syntax(""));
        }
        if ends.iter().any(|w| l.peek_is(w)) {
            return Ok(out);
        }
        out.push(parse_stmt(l)?);
    }
}

fn parse_stmt(l: &mut Lexed<'_>) -> Result<RawStmt> {
    let line = l.line();
    let label = l.label()?;
    if label.is_some() || l.peek_is("loop") || l.peek_is("while") || l.peek_is("for") {
        if l.peek_is("declare") || l.peek_is("begin") {
            let b = block(l, label)?;
            l.semicolon()?;
            return Ok(RawStmt::Block(line, Box::new(b)));
        }
        if l.peek_is("foreach") {
            l.pos += 1;
            return parse_foreach(l, line, label);
        }
        return parse_loop(l, line, label);
    }
    if l.peek_is("declare") || l.peek_is("begin") {
        let b = block(l, None)?;
        l.semicolon()?;
        return Ok(RawStmt::Block(line, Box::new(b)));
    }
    if l.eat("foreach") {
        return parse_foreach(l, line, None);
    }
    if l.eat("return") {
        if l.at_semicolon() {
            l.pos += 1;
            return Ok(RawStmt::Return(line, None));
        }
        if l.peek_is("next") || l.peek_is("query") {
            return Err(unsupported(&format!("RETURN {}", l.text(l.pos))));
        }
        let e = l.until(&is_semicolon)?;
        l.semicolon()?;
        return Ok(RawStmt::Return(line, Some(e)));
    }
    if l.eat("null") {
        l.semicolon()?;
        return Ok(RawStmt::Null);
    }
    if l.eat("if") {
        return parse_if(l, line);
    }
    if l.eat("raise") {
        return parse_raise(l, line);
    }
    if l.peek_is("exit") || l.peek_is("continue") {
        let cont = l.peek_is("continue");
        l.pos += 1;
        let mut label = None;
        if !l.at_semicolon() && !l.peek_is("when") {
            label = Some(ident(l)?);
        }
        let cond = if l.eat("when") {
            Some(l.until(&is_semicolon)?)
        } else {
            None
        };
        l.semicolon()?;
        return Ok(RawStmt::Exit(line, cont, label, cond));
    }
    if l.peek_is("select") || l.peek_is("with") {
        let start = l.pos;
        l.until(&is_semicolon)?;
        let end = l.pos;
        l.semicolon()?;
        let (query, into) = split_into(l, start, end)?;
        return Ok(RawStmt::Sql(line, query, into, false));
    }
    if l.eat("perform") {
        let q = l.until(&is_semicolon)?;
        l.semicolon()?;
        return Ok(RawStmt::Sql(line, format!("SELECT {q}"), None, true));
    }
    if l.eat("assert") {
        let cond = l.until(&|l, k| is_semicolon(l, k) || l.toks[k].kind == TokenKind::Comma)?;
        let msg = if matches!(l.kind(l.pos), Some(TokenKind::Comma)) {
            l.pos += 1;
            Some(l.until(&is_semicolon)?)
        } else {
            None
        };
        l.semicolon()?;
        return Ok(RawStmt::Assert(line, cond, msg));
    }
    if l.peek_is("get") && l.is_word(l.pos + 1, "diagnostics") {
        l.pos += 2;
        let mut items = Vec::new();
        loop {
            let var = ident(l)?;
            let op = assign_op(l, l.pos);
            if op == 0 {
                return Err(syntax(l.text(l.pos)));
            }
            l.pos += op;
            items.push((var, ident(l)?));
            if matches!(l.kind(l.pos), Some(TokenKind::Comma)) {
                l.pos += 1;
            } else {
                break;
            }
        }
        l.semicolon()?;
        return Ok(RawStmt::GetDiagnostics(line, items));
    }
    let first = l.text(l.pos).to_string();
    let op = assign_op(l, l.pos + 1);
    if op > 0
        && matches!(
            l.kind(l.pos),
            Some(TokenKind::Word(_) | TokenKind::QuotedIdent(_))
        )
    {
        let name = ident(l)?;
        l.pos += op;
        let e = l.until(&is_semicolon)?;
        l.semicolon()?;
        return Ok(RawStmt::Assign(line, name, e));
    }
    Err(unsupported(&first))
}

fn unsupported(what: &str) -> Error {
    err!(
        FeatureNotSupported,
        "PL/pgSQL statement \"{}\" is not supported",
        what.to_uppercase()
    )
}

/// Splits `INTO [STRICT] a, b` out of the query in tokens `start..end`.
fn split_into(l: &Lexed<'_>, start: usize, end: usize) -> Result<(String, Option<Into>)> {
    let mut depth = 0usize;
    for k in start..end {
        match l.toks[k].kind {
            TokenKind::LParen => depth += 1,
            TokenKind::RParen => depth = depth.saturating_sub(1),
            TokenKind::Word(_) if depth == 0 && l.is_word(k, "into") => {
                let mut m = k + 1;
                let strict = l.is_word(m, "strict");
                if strict {
                    m += 1;
                }
                let mut targets = Vec::new();
                let mut sub = Lexed {
                    src: l.src,
                    toks: l.toks.clone(),
                    pos: m,
                };
                loop {
                    let mut name = ident(&mut sub)?;
                    if matches!(sub.kind(sub.pos), Some(TokenKind::Dot)) {
                        sub.pos += 1;
                        name = format!("{name}.{}", ident(&mut sub)?);
                    }
                    targets.push(name);
                    if sub.pos < end && matches!(sub.kind(sub.pos), Some(TokenKind::Comma)) {
                        sub.pos += 1;
                    } else {
                        break;
                    }
                }
                let query = format!("{} {}", l.span(start, k), l.span(sub.pos, end));
                return Ok((query, Some(Into { targets, strict })));
            }
            _ => {}
        }
    }
    Ok((l.span(start, end), None))
}

fn parse_loop(l: &mut Lexed<'_>, line: u32, label: Option<String>) -> Result<RawStmt> {
    let kind = if l.eat("loop") {
        LoopKind::Plain
    } else if l.eat("while") {
        let c = l.until(&word_stop(&["loop"]))?;
        l.expect("loop")?;
        LoopKind::While(c)
    } else if l.eat("for") {
        let var = ident(l)?;
        l.expect("in")?;
        let reverse = l.eat("reverse");
        let start = l.pos;
        l.until(&word_stop(&["loop"]))?;
        let end = l.pos;
        l.expect("loop")?;
        for_kind(l, var, reverse, start, end)?
    } else {
        return Err(syntax(l.text(l.pos)));
    };
    let body = parse_stmts(l, &["end"])?;
    l.expect("end")?;
    l.expect("loop")?;
    end_label(l, &label)?;
    l.semicolon()?;
    Ok(RawStmt::Loop(line, label, kind, body))
}

/// `FOR var IN` tokens `start..end`: an integer range when its text has
/// `..` outside parentheses and strings, else a query.
fn for_kind(
    l: &Lexed<'_>,
    var: String,
    reverse: bool,
    start: usize,
    end: usize,
) -> Result<LoopKind> {
    let mut depth = 0usize;
    for k in start..end {
        match l.toks[k].kind {
            TokenKind::LParen => depth += 1,
            TokenKind::RParen => depth = depth.saturating_sub(1),
            TokenKind::String(..) | TokenKind::QuotedIdent(_) => {}
            _ if depth == 0 => {
                // `1..10` lexes as `1.` `.10`; `a .. b` as `.` `.`.
                let text = l.text(k);
                let next = l.text(k + 1);
                let joined = l.toks[k].end == l.toks.get(k + 1).map_or(0, |t| t.start);
                let dotdot =
                    (text.ends_with('.') && next.starts_with('.') && joined) || text.contains("..");
                if dotdot && k + 1 < end {
                    let cut = if text.contains("..") {
                        l.toks[k].start + text.find("..").unwrap_or(0)
                    } else {
                        l.toks[k].end - 1
                    };
                    let lo = l.src[l.toks[start].start..cut].trim().to_string();
                    let rest = l.src[cut + 2..l.toks[end - 1].end].to_string();
                    let (hi, step) = split_by(&rest);
                    return Ok(LoopKind::Range {
                        var,
                        reverse,
                        lo,
                        hi,
                        step,
                    });
                }
            }
            _ => {}
        }
    }
    if reverse {
        return Err(syntax("reverse"));
    }
    if l.is_word(start, "execute") {
        return Err(unsupported("FOR ... IN EXECUTE"));
    }
    Ok(LoopKind::Query {
        var,
        query: l.span(start, end),
    })
}

/// `hi [BY step]`.
fn split_by(text: &str) -> (String, Option<String>) {
    let toks = tokenize(text);
    let mut depth = 0usize;
    for t in &toks {
        match t.kind {
            TokenKind::LParen => depth += 1,
            TokenKind::RParen => depth = depth.saturating_sub(1),
            TokenKind::Word(_) if depth == 0 && text[t.start..t.end].eq_ignore_ascii_case("by") => {
                return (
                    text[..t.start].trim().to_string(),
                    Some(text[t.end..].trim().to_string()),
                );
            }
            _ => {}
        }
    }
    (text.trim().to_string(), None)
}

fn parse_foreach(l: &mut Lexed<'_>, line: u32, label: Option<String>) -> Result<RawStmt> {
    let var = ident(l)?;
    if l.peek_is("slice") {
        return Err(unsupported("FOREACH ... SLICE"));
    }
    l.expect("in")?;
    l.expect("array")?;
    let array = l.until(&word_stop(&["loop"]))?;
    l.expect("loop")?;
    let body = parse_stmts(l, &["end"])?;
    l.expect("end")?;
    l.expect("loop")?;
    end_label(l, &label)?;
    l.semicolon()?;
    Ok(RawStmt::Loop(
        line,
        label,
        LoopKind::Foreach { var, array },
        body,
    ))
}

fn parse_if(l: &mut Lexed<'_>, line: u32) -> Result<RawStmt> {
    let then = word_stop(&["then"]);
    let mut arms = Vec::new();
    let cond = l.until(&then)?;
    l.expect("then")?;
    arms.push((cond, parse_stmts(l, &["elsif", "elseif", "else", "end"])?));
    let mut otherwise = Vec::new();
    loop {
        if l.eat("elsif") || l.eat("elseif") {
            let cond = l.until(&then)?;
            l.expect("then")?;
            arms.push((cond, parse_stmts(l, &["elsif", "elseif", "else", "end"])?));
        } else if l.eat("else") {
            otherwise = parse_stmts(l, &["end"])?;
        } else {
            l.expect("end")?;
            l.expect("if")?;
            l.semicolon()?;
            return Ok(RawStmt::If(line, arms, otherwise));
        }
    }
}

fn parse_raise(l: &mut Lexed<'_>, line: u32) -> Result<RawStmt> {
    let level = if l.eat("exception") {
        RaiseLevel::Exception
    } else if l.eat("warning") {
        RaiseLevel::Warning
    } else if l.eat("notice") {
        RaiseLevel::Notice
    } else if l.eat("info") {
        RaiseLevel::Info
    } else if l.eat("log") || l.eat("debug") {
        RaiseLevel::Log
    } else {
        RaiseLevel::Exception
    };
    let mut r = RawRaise {
        level,
        format: None,
        args: Vec::new(),
        condition: None,
        options: Vec::new(),
    };
    if l.at_semicolon() {
        // `RAISE;`: re-throw the error being handled.
        l.pos += 1;
        return Ok(RawStmt::Raise(line, r));
    }
    if matches!(l.kind(l.pos), Some(TokenKind::String(..))) {
        r.format = Some(string_literal(l)?);
        while matches!(l.kind(l.pos), Some(TokenKind::Comma)) {
            l.pos += 1;
            r.args.push(l.until(&|l, k| {
                is_semicolon(l, k) || l.toks[k].kind == TokenKind::Comma || l.is_word(k, "using")
            })?);
        }
    } else if !l.peek_is("using") {
        let c = ident(l)?;
        r.condition = Some(if c == "sqlstate" {
            format!("sqlstate {}", string_literal(l)?)
        } else {
            c
        });
    }
    if l.eat("using") {
        loop {
            let name = ident(l)?;
            let op = assign_op(l, l.pos);
            if op == 0 {
                return Err(syntax(l.text(l.pos)));
            }
            l.pos += op;
            let e = l.until(&|l, k| is_semicolon(l, k) || l.toks[k].kind == TokenKind::Comma)?;
            r.options.push((name, e));
            if matches!(l.kind(l.pos), Some(TokenKind::Comma)) {
                l.pos += 1;
            } else {
                break;
            }
        }
    }
    l.semicolon()?;
    if let Some(format) = &r.format {
        let wanted = format.matches('%').count() - 2 * format.matches("%%").count();
        if wanted != r.args.len() {
            return Err(err!(
                SyntaxError,
                "too {} parameters specified for RAISE",
                if r.args.len() > wanted { "many" } else { "few" }
            ));
        }
    }
    Ok(RawStmt::Raise(line, r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_parse_into_statements() {
        let b = parse_block(
            "declare x int := 1; y text; begin if a > 0 then x := case when a = 1 then 2 end; \
             elsif a < 0 then raise notice 'neg % %', a, x; else null; end if; return x; end;",
        )
        .unwrap();
        assert_eq!(b.decls.len(), 2);
        assert_eq!(b.decls[0].default.as_deref(), Some("1"));
        assert_eq!(b.decls[1].type_text, "text");
        assert_eq!(b.body.len(), 2);
        let RawStmt::If(_, arms, otherwise) = &b.body[0] else {
            panic!("not an if")
        };
        assert_eq!(arms.len(), 2);
        assert!(
            matches!(&arms[0].1[0], RawStmt::Assign(_, n, e) if n == "x" && e == "case when a = 1 then 2 end")
        );
        assert!(matches!(otherwise[0], RawStmt::Null));
        assert!(parse_block("begin return 1; end").is_ok());
        assert!(parse_block("begin return 1;").is_err());
        assert!(parse_block("begin loop end; end").is_err());
        let e = parse_block("begin raise notice 'a %'; end").unwrap_err();
        assert_eq!(e.message, "too few parameters specified for RAISE");
    }

    /// Loops, ranges (`1..10` lexes as two numbers), INTO lists, labels
    /// and exception handlers.
    #[test]
    fn loops_queries_and_handlers_parse() {
        let b = parse_block(
            "begin <<outer>> for i in reverse 10..1 by 2 loop exit outer when i < 3; end loop outer; \
             for r in select a, b from t loop continue; end loop; \
             select a, b into strict x, y from t where a = 1; perform f(1); \
             foreach e in array arr loop null; end loop; \
             begin x := 1/0; exception when division_by_zero or sqlstate '22003' then null; \
             when others then raise; end; end",
        )
        .unwrap();
        let RawStmt::Loop(
            _,
            Some(lab),
            LoopKind::Range {
                lo,
                hi,
                step,
                reverse,
                ..
            },
            body,
        ) = &b.body[0]
        else {
            panic!("not a range loop: {:?}", b.body[0])
        };
        assert_eq!(
            (lab.as_str(), lo.as_str(), hi.as_str()),
            ("outer", "10", "1")
        );
        assert_eq!(step.as_deref(), Some("2"));
        assert!(*reverse);
        assert!(matches!(&body[0], RawStmt::Exit(_, false, Some(l), Some(_)) if l == "outer"));
        assert!(
            matches!(&b.body[1], RawStmt::Loop(_, None, LoopKind::Query { query, .. }, _) if query == "select a, b from t")
        );
        let RawStmt::Sql(_, q, Some(into), false) = &b.body[2] else {
            panic!("not a select into")
        };
        assert_eq!(q, "select a, b from t where a = 1");
        assert_eq!(into.targets, ["x", "y"]);
        assert!(into.strict);
        assert!(matches!(&b.body[3], RawStmt::Sql(_, q, None, true) if q == "SELECT f(1)"));
        assert!(matches!(
            &b.body[4],
            RawStmt::Loop(_, _, LoopKind::Foreach { .. }, _)
        ));
        let RawStmt::Block(_, inner) = &b.body[5] else {
            panic!("not a block")
        };
        assert_eq!(inner.handlers.len(), 2);
        assert_eq!(inner.handlers[0].0, ["division_by_zero", "sqlstate 22003"]);
        assert!(parse_block("begin loop null; end loop x; end").is_err());
    }
}
