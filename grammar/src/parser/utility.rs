//! Utility statements: `COPY`, `VACUUM`, `ANALYZE`, `EXPLAIN`, transaction
//! control, `SET`/`SHOW`/`RESET`.
//!
//! Parenthesised option lists (`COPY ... WITH (...)`, `EXPLAIN (...)`,
//! `VACUUM (...)`) are generic `name [value]` lists, as in PostgreSQL: the
//! names are checked here, with PostgreSQL's messages for unknown ones
//! (fatal errors, positioned at the option's name).

use nom::branch::alt;
use nom::combinator::{cut, map, opt, value};
use nom::multi::{fold_many0, separated_list1};
use nom::sequence::{pair, preceded, terminated, tuple};
use nom::Parser;

use super::literal::string;
use super::query::query;
use super::tokens::{
    col_id, col_label, ident_value, is_col_id, kw, kw_of, tok, word, PResult, Tokens,
};
use super::{col_list, object_name, opt_paren_col_list, paren_col_list, statement};
use crate::ast::{
    Analyze, Copy, CopyDirection, CopyFormat, CopyOption, CopySource, CopyTarget, Explain,
    ExplainFormat, ExplainOptions, IsolationLevel, Reset, Set, SetArg, SetValue, Show, Statement,
    TableAndColumns, TransactionModes, Vacuum,
};
use crate::error::{ParseError, ParseErrorKind};
use crate::keywords::{Keyword, KeywordClass};
use crate::lexer::{Token, TokenKind};

/// A generic option: its name token, lower-cased name and value (if any).
#[derive(Clone)]
struct GenericOption {
    token: Token,
    name: String,
    value: Option<OptionValue>,
}

/// The value of a generic option.
#[derive(Clone)]
enum OptionValue {
    /// A string, number or word, as text (words lower-cased).
    Scalar(String),
    /// `(col, ...)`
    Columns(Vec<String>),
    /// `*`
    Star,
}

/// `generic_option ::= option_name [ '*' | '(' col_id {',' col_id} ')' | option_value ]`
/// (COPY's option names are any `ColLabel`; the other statements' are
/// PostgreSQL's `utility_option_name`: a non-reserved word, ANALYZE or ANALYSE).
fn generic_option<'a>(copy: bool) -> impl FnMut(Tokens<'a>) -> PResult<'a, GenericOption> {
    move |i| {
        let token = i.first();
        let (i, name) = if copy {
            col_label(i)?
        } else {
            utility_option_name(i)?
        };
        // Dispatched on the value's first token (as nom 8's `dispatch!`).
        let (i, value) = match i.first().kind {
            TokenKind::Star => map(tok(TokenKind::Star), |_| Some(OptionValue::Star))(i)?,
            TokenKind::LParen => map(paren_col_list, |c| Some(OptionValue::Columns(c)))(i)?,
            _ => opt(map(option_value, |a| match a {
                SetArg::String(s) | SetArg::Number(s) | SetArg::Word(s) => OptionValue::Scalar(s),
            }))(i)?,
        };
        Ok((i, GenericOption { token, name, value }))
    }
}

/// `utility_option_name ::= NonReservedWord | 'ANALYZE' | 'ANALYSE'`
fn utility_option_name(i: Tokens<'_>) -> PResult<'_, String> {
    let t = i.first();
    match t.kind {
        TokenKind::Word(k)
            if k.class() != KeywordClass::Reserved
                || matches!(k, Keyword::Analyze | Keyword::Analyse) =>
        {
            Ok((i.skip(1), ident_value(i, t)))
        }
        TokenKind::QuotedIdent(_) => Ok((i.skip(1), ident_value(i, t))),
        _ => i.fail(),
    }
}

/// `option_value ::= 'TRUE' | 'FALSE' | 'ON' | NonReservedWord | string | ['-' | '+'] number`
/// (PostgreSQL's `opt_boolean_or_string | NumericOnly`)
fn option_value(i: Tokens<'_>) -> PResult<'_, SetArg> {
    match i.first().kind {
        TokenKind::Word(k)
            if k.class() == KeywordClass::Reserved
                && !matches!(k, Keyword::True | Keyword::False | Keyword::On) =>
        {
            i.fail()
        }
        _ => set_arg(i),
    }
}

/// `generic_options ::= '(' generic_option {',' generic_option} ')'`
fn generic_options<'a>(copy: bool) -> impl FnMut(Tokens<'a>) -> PResult<'a, Vec<GenericOption>> {
    preceded(
        tok(TokenKind::LParen),
        cut(terminated(
            separated_list1(tok(TokenKind::Comma), cut(generic_option(copy))),
            tok(TokenKind::RParen),
        )),
    )
}

/// A fatal error with a message of its own at an option's name.
fn option_error(i: Tokens<'_>, option: &GenericOption, message: String) -> nom::Err<super::PError> {
    fatal(i.ctx.error_msg(option.token, message))
}

/// A fatal error.
fn fatal(e: ParseError) -> nom::Err<super::PError> {
    nom::Err::Failure(super::PError::Full(Box::new(e)))
}

/// `boolean ::= 'true' | 'false' | 'on' | 'off' | '1' | '0'` (true when
/// absent), with PostgreSQL's message for anything else.
fn option_bool(i: Tokens<'_>, option: &GenericOption) -> Result<bool, nom::Err<super::PError>> {
    let bad = || {
        // COPY's HEADER also takes `match` in PostgreSQL, and says so.
        let or_match = if option.name == "header" {
            " or \"match\""
        } else {
            ""
        };
        option_error(
            i,
            option,
            format!("{} requires a Boolean value{or_match}", option.name),
        )
    };
    match &option.value {
        None => Ok(true),
        Some(OptionValue::Scalar(v)) => match v.to_ascii_lowercase().as_str() {
            "true" | "on" | "1" => Ok(true),
            "false" | "off" | "0" => Ok(false),
            _ => Err(bad()),
        },
        Some(_) => Err(bad()),
    }
}

/// The string value of an option, or PostgreSQL's error.
fn option_string(i: Tokens<'_>, option: &GenericOption) -> Result<String, nom::Err<super::PError>> {
    match &option.value {
        Some(OptionValue::Scalar(v)) => Ok(v.clone()),
        _ => Err(option_error(
            i,
            option,
            format!("{} requires a parameter", option.name),
        )),
    }
}

/// `copy_source ::= object_name ['(' col_id {',' col_id} ')'] | '(' query ')'`
fn copy_source(i: Tokens<'_>) -> PResult<'_, CopySource> {
    if i.first().kind == TokenKind::LParen {
        map(
            preceded(
                tok(TokenKind::LParen),
                cut(terminated(query, tok(TokenKind::RParen))),
            ),
            |q| CopySource::Query(Box::new(q)),
        )(i)
    } else {
        map(pair(object_name, opt_paren_col_list), |(name, columns)| {
            CopySource::Table { name, columns }
        })(i)
    }
}

/// `copy ::= 'COPY' ['BINARY'] copy_source ('FROM' | 'TO') (string | 'STDIN' | 'STDOUT')
///   [['WITH'] ('(' copy_option {',' copy_option} ')' | {legacy_copy_option})]`
pub(crate) fn copy(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Copy).parse(i)?;
    let (i, (binary, source)) = cut(pair(opt(kw(Keyword::Binary)), copy_source))(i)?;
    let (i, direction) = cut(alt((
        value(CopyDirection::From, kw(Keyword::From)),
        value(CopyDirection::To, kw(Keyword::To)),
    )))(i)?;
    if matches!(source, CopySource::Query(_)) && direction == CopyDirection::From {
        // PostgreSQL's grammar has no `COPY (query) FROM`.
        return Err(fatal(i.ctx.error_at(i.prev())));
    }
    let (i, target) = cut(alt((
        value(CopyTarget::Stdin, kw(Keyword::Stdin)),
        value(CopyTarget::Stdout, kw(Keyword::Stdout)),
        map(string, CopyTarget::File),
    )))(i)?;
    let mut options = Vec::new();
    if binary.is_some() {
        options.push(CopyOption::Format(CopyFormat::Binary));
    }
    let (i, _) = opt(kw(Keyword::With))(i)?;
    let (i, options) = if i.first().kind == TokenKind::LParen {
        let (rest, generic) = generic_options(true)(i)?;
        for option in &generic {
            options.push(copy_option(i, option)?);
        }
        (rest, options)
    } else {
        // Legacy options go straight into `options`.
        let mut options = Some(options);
        fold_many0(
            legacy_copy_option,
            move || options.take().unwrap_or_default(),
            |mut options, option| {
                options.push(option);
                options
            },
        )(i)?
    };
    Ok((
        i,
        Statement::Copy(Box::new(Copy {
            source,
            direction,
            target,
            options,
        })),
    ))
}

/// `copy_option ::= 'FORMAT' ('text' | 'csv' | 'binary')
///   | ('DELIMITER' | 'NULL' | 'QUOTE' | 'ESCAPE' | 'ENCODING') string
///   | ('HEADER' | 'FREEZE') [boolean]
///   | 'FORCE_QUOTE' ('*' | '(' col_id {',' col_id} ')')
///   | 'FORCE_NOT_NULL' '(' col_id {',' col_id} ')'`
fn copy_option(
    i: Tokens<'_>,
    option: &GenericOption,
) -> Result<CopyOption, nom::Err<super::PError>> {
    Ok(match option.name.as_str() {
        "format" => {
            let format = option_string(i, option)?;
            match format.as_str() {
                "text" => CopyOption::Format(CopyFormat::Text),
                "csv" => CopyOption::Format(CopyFormat::Csv),
                "binary" => CopyOption::Format(CopyFormat::Binary),
                _ => {
                    return Err(fatal(
                        i.ctx
                            .error_msg(
                                option.token,
                                format!("COPY format \"{format}\" not recognized"),
                            )
                            .with_kind(ParseErrorKind::InvalidParameterValue),
                    ))
                }
            }
        }
        "delimiter" => CopyOption::Delimiter(option_string(i, option)?),
        "null" => CopyOption::Null(option_string(i, option)?),
        "header" => CopyOption::Header(option_bool(i, option)?),
        "quote" => CopyOption::Quote(option_string(i, option)?),
        "escape" => CopyOption::Escape(option_string(i, option)?),
        "freeze" => CopyOption::Freeze(option_bool(i, option)?),
        "encoding" => CopyOption::Encoding(option_string(i, option)?),
        "force_quote" => match &option.value {
            Some(OptionValue::Star) => CopyOption::ForceQuote(Vec::new()),
            Some(OptionValue::Columns(c)) => CopyOption::ForceQuote(c.clone()),
            _ => {
                return Err(option_error(
                    i,
                    option,
                    "argument to option \"force_quote\" must be a list of column names".into(),
                ))
            }
        },
        "force_not_null" => match &option.value {
            Some(OptionValue::Columns(c)) => CopyOption::ForceNotNull(c.clone()),
            _ => {
                return Err(option_error(
                    i,
                    option,
                    "argument to option \"force_not_null\" must be a list of column names".into(),
                ))
            }
        },
        _ => {
            return Err(option_error(
                i,
                option,
                format!("option \"{}\" not recognized", option.name),
            ))
        }
    })
}

/// `legacy_copy_option ::= 'BINARY' | 'FREEZE' | 'CSV' | 'HEADER'
///   | ('DELIMITER' | 'NULL' | 'QUOTE' | 'ESCAPE' | 'ENCODING') ['AS'] string
///   | 'FORCE' 'QUOTE' ('*' | col_id {',' col_id})
///   | 'FORCE' 'NOT' 'NULL' col_id {',' col_id}`
fn legacy_copy_option(i: Tokens<'_>) -> PResult<'_, CopyOption> {
    /// `KEYWORD ['AS'] string`
    fn legacy_string<'a>(k: Keyword) -> impl FnMut(Tokens<'a>) -> PResult<'a, String> {
        preceded(kw(k), cut(preceded(opt(kw(Keyword::As)), string)))
    }
    // Dispatched on the option's keyword (as nom 8's `dispatch!`).
    let Some(k) = i.keyword() else {
        return i.fail();
    };
    match k {
        Keyword::Binary => map(kw(k), |_| CopyOption::Format(CopyFormat::Binary))(i),
        Keyword::Freeze => map(kw(k), |_| CopyOption::Freeze(true))(i),
        Keyword::Csv => map(kw(k), |_| CopyOption::Format(CopyFormat::Csv))(i),
        Keyword::Header => map(kw(k), |_| CopyOption::Header(true))(i),
        Keyword::Delimiter => map(legacy_string(k), CopyOption::Delimiter)(i),
        Keyword::Null => map(legacy_string(k), CopyOption::Null)(i),
        Keyword::Quote => map(legacy_string(k), CopyOption::Quote)(i),
        Keyword::Escape => map(legacy_string(k), CopyOption::Escape)(i),
        Keyword::Encoding => map(legacy_string(k), CopyOption::Encoding)(i),
        Keyword::Force => preceded(
            kw(Keyword::Force),
            cut(alt((
                preceded(
                    kw(Keyword::Quote),
                    alt((
                        value(CopyOption::ForceQuote(Vec::new()), tok(TokenKind::Star)),
                        map(col_list, CopyOption::ForceQuote),
                    )),
                ),
                map(
                    preceded(pair(kw(Keyword::Not), kw(Keyword::Null)), col_list),
                    CopyOption::ForceNotNull,
                ),
            ))),
        )(i),
        _ => i.fail(),
    }
}

/// `table_list ::= object_name ['(' col_id {',' col_id} ')'] {',' object_name ['(' ... ')']}`
/// (possibly empty: only when a name follows).
fn table_list(i: Tokens<'_>) -> PResult<'_, Vec<TableAndColumns>> {
    if !is_col_id(i.first().kind) {
        return Ok((i, Vec::new()));
    }
    separated_list1(
        tok(TokenKind::Comma),
        cut(map(
            pair(object_name, opt_paren_col_list),
            |(name, columns)| TableAndColumns { name, columns },
        )),
    )(i)
}

/// `vacuum ::= 'VACUUM' '(' vacuum_option [boolean] {',' ...} ')' [table_list]
///   | 'VACUUM' ['FULL'] ['FREEZE'] ['VERBOSE'] ['ANALYZE' | 'ANALYSE'] [table_list]`
pub(crate) fn vacuum(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Vacuum).parse(i)?;
    let mut vacuum = Vacuum::default();
    let i = if i.first().kind == TokenKind::LParen {
        let (rest, options) = generic_options(false)(i)?;
        for option in &options {
            let on = option_bool(i, option)?;
            match option.name.as_str() {
                "full" => vacuum.full = on,
                "freeze" => vacuum.freeze = on,
                "verbose" => vacuum.verbose = on,
                "analyze" | "analyse" => vacuum.analyze = on,
                "disable_page_skipping" => vacuum.disable_page_skipping = on,
                _ => {
                    return Err(option_error(
                        i,
                        option,
                        format!("unrecognized VACUUM option \"{}\"", option.name),
                    ))
                }
            }
        }
        rest
    } else {
        let (rest, (full, freeze, verbose, analyze)) = tuple((
            opt(kw(Keyword::Full)),
            opt(kw(Keyword::Freeze)),
            opt(kw(Keyword::Verbose)),
            opt(kw_of(&[Keyword::Analyze, Keyword::Analyse])),
        ))(i)?;
        vacuum.full = full.is_some();
        vacuum.freeze = freeze.is_some();
        vacuum.verbose = verbose.is_some();
        vacuum.analyze = analyze.is_some();
        rest
    };
    let (i, tables) = table_list(i)?;
    vacuum.tables = tables;
    Ok((i, Statement::Vacuum(vacuum)))
}

/// `analyze ::= ('ANALYZE' | 'ANALYSE') ['VERBOSE' | '(' 'VERBOSE' [boolean] ')'] [table_list]`
pub(crate) fn analyze(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw_of(&[Keyword::Analyze, Keyword::Analyse])(i)?;
    let mut analyze = Analyze::default();
    let i = if i.first().kind == TokenKind::LParen {
        let (rest, options) = generic_options(false)(i)?;
        for option in &options {
            let on = option_bool(i, option)?;
            match option.name.as_str() {
                "verbose" => analyze.verbose = on,
                _ => {
                    return Err(option_error(
                        i,
                        option,
                        format!("unrecognized ANALYZE option \"{}\"", option.name),
                    ))
                }
            }
        }
        rest
    } else {
        let (rest, verbose) = opt(kw(Keyword::Verbose))(i)?;
        analyze.verbose = verbose.is_some();
        rest
    };
    let (i, tables) = table_list(i)?;
    analyze.tables = tables;
    Ok((i, Statement::Analyze(analyze)))
}

/// `explain_option ::= ('ANALYZE' | 'VERBOSE' | 'COSTS' | 'BUFFERS' | 'TIMING' | 'SUMMARY') [boolean]
///   | 'FORMAT' ('text' | 'json' | 'yaml' | 'xml')`
fn explain_option(
    i: Tokens<'_>,
    option: &GenericOption,
    options: &mut ExplainOptions,
) -> Result<(), nom::Err<super::PError>> {
    match option.name.as_str() {
        "analyze" | "analyse" => options.analyze = option_bool(i, option)?,
        "verbose" => options.verbose = option_bool(i, option)?,
        "costs" => options.costs = option_bool(i, option)?,
        "buffers" => options.buffers = option_bool(i, option)?,
        "timing" => options.timing = option_bool(i, option)?,
        "summary" => options.summary = Some(option_bool(i, option)?),
        "format" => {
            let format = option_string(i, option)?;
            options.format = match format.as_str() {
                "text" => ExplainFormat::Text,
                "json" => ExplainFormat::Json,
                "yaml" => ExplainFormat::Yaml,
                "xml" => ExplainFormat::Xml,
                _ => {
                    return Err(fatal(
                        i.ctx
                            .error_msg(
                                option.token,
                                format!(
                                    "unrecognized value for EXPLAIN option \"format\": \"{format}\""
                                ),
                            )
                            .with_kind(ParseErrorKind::InvalidParameterValue),
                    ))
                }
            };
        }
        _ => {
            return Err(option_error(
                i,
                option,
                format!("unrecognized EXPLAIN option \"{}\"", option.name),
            ))
        }
    }
    Ok(())
}

/// `explain ::= 'EXPLAIN' ['(' explain_option {',' explain_option} ')' | 'ANALYZE' ['VERBOSE'] | 'VERBOSE']
///   (query | insert | update | delete | create_table_as)`
pub(crate) fn explain(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Explain).parse(i)?;
    let mut options = ExplainOptions::default();
    // `EXPLAIN (` opens options unless it opens a parenthesised query.
    let i = if i.first().kind == TokenKind::LParen
        && !matches!(
            i.kind(1),
            TokenKind::Word(Keyword::Select | Keyword::Values | Keyword::With) | TokenKind::LParen
        ) {
        let (rest, generic) = generic_options(false)(i)?;
        for option in &generic {
            explain_option(i, option, &mut options)?;
        }
        rest
    } else {
        let (rest, (analyze, verbose)) = pair(
            opt(kw_of(&[Keyword::Analyze, Keyword::Analyse])),
            opt(kw(Keyword::Verbose)),
        )(i)?;
        options.analyze = analyze.is_some();
        options.verbose = verbose.is_some();
        rest
    };
    let explainable = matches!(
        i.first().kind,
        TokenKind::LParen
            | TokenKind::Word(
                Keyword::Select
                    | Keyword::Values
                    | Keyword::With
                    | Keyword::Insert
                    | Keyword::Update
                    | Keyword::Delete
                    | Keyword::Create
            )
    );
    if !explainable {
        return Err(nom::Err::Failure(super::PError::At(i.first())));
    }
    let (i, statement) = cut(statement)(i)?;
    if let Statement::CreateTable(_) = statement {
        // Only CREATE TABLE AS is explainable; report at the statement end.
        return Err(fatal(i.ctx.error_at(i.prev())));
    }
    Ok((
        i,
        Statement::Explain(Box::new(Explain { options, statement })),
    ))
}

/// `['WORK' | 'TRANSACTION']`
fn work_or_transaction(i: Tokens<'_>) -> PResult<'_, Option<Keyword>> {
    opt(kw_of(&[Keyword::Work, Keyword::Transaction]))(i)
}

/// `and_chain ::= ['AND' ['NO'] 'CHAIN']`: true for `AND CHAIN`.
fn and_chain(i: Tokens<'_>) -> PResult<'_, bool> {
    map(
        opt(preceded(
            kw(Keyword::And),
            cut(pair(opt(word("no")), word("chain"))),
        )),
        |c| matches!(c, Some((None, _))),
    )(i)
}

/// `begin ::= ('BEGIN' ['WORK' | 'TRANSACTION'] | 'START' 'TRANSACTION') [transaction_modes]`
/// `commit ::= ('COMMIT' | 'END') ['WORK' | 'TRANSACTION'] and_chain`
/// `rollback ::= ('ROLLBACK' | 'ABORT') ['WORK' | 'TRANSACTION'] and_chain`
pub(crate) fn transaction(i: Tokens<'_>) -> PResult<'_, Statement> {
    // Dispatched on the leading keyword (as nom 8's `dispatch!`).
    match i.keyword() {
        Some(Keyword::Begin) => map(
            preceded(
                pair(kw(Keyword::Begin), work_or_transaction),
                cut(transaction_modes),
            ),
            Statement::Begin,
        )(i),
        Some(Keyword::Start) => map(
            preceded(
                pair(kw(Keyword::Start), cut(kw(Keyword::Transaction))),
                cut(transaction_modes),
            ),
            Statement::Begin,
        )(i),
        Some(Keyword::Commit | Keyword::End) => map(
            tuple((
                kw_of(&[Keyword::Commit, Keyword::End]),
                work_or_transaction,
                and_chain,
            )),
            |(_, _, chain)| Statement::Commit { chain },
        )(i),
        Some(Keyword::Rollback | Keyword::Abort) => map(
            tuple((
                kw_of(&[Keyword::Rollback, Keyword::Abort]),
                work_or_transaction,
                and_chain,
            )),
            |(_, _, chain)| Statement::Rollback { chain },
        )(i),
        _ => i.fail(),
    }
}

/// `transaction_mode ::= 'ISOLATION' 'LEVEL' ('SERIALIZABLE' | 'REPEATABLE' 'READ'
///   | 'READ' 'COMMITTED' | 'READ' 'UNCOMMITTED') | 'READ' 'ONLY' | 'READ' 'WRITE'
///   | ['NOT'] 'DEFERRABLE'`
fn transaction_mode(i: Tokens<'_>) -> PResult<'_, TransactionModes> {
    let none = TransactionModes::default();
    // Dispatched on the leading keyword (as nom 8's `dispatch!`).
    match i.keyword() {
        Some(Keyword::Isolation) => map(
            preceded(
                kw(Keyword::Isolation),
                cut(preceded(kw(Keyword::Level), isolation_level)),
            ),
            |level| TransactionModes {
                isolation: Some(level),
                ..none
            },
        )(i),
        Some(Keyword::Read) => map(
            preceded(
                kw(Keyword::Read),
                cut(alt((
                    value(true, kw(Keyword::Only)),
                    value(false, kw(Keyword::Write)),
                ))),
            ),
            |read_only| TransactionModes {
                read_only: Some(read_only),
                ..none
            },
        )(i),
        Some(Keyword::Not) => map(pair(kw(Keyword::Not), word("deferrable")), |_| {
            TransactionModes {
                deferrable: Some(false),
                ..none
            }
        })(i),
        _ => map(word("deferrable"), |_| TransactionModes {
            deferrable: Some(true),
            ..none
        })(i),
    }
}

/// `isolation_level ::= 'SERIALIZABLE' | 'REPEATABLE' 'READ' | 'READ' 'COMMITTED'
///   | 'READ' 'UNCOMMITTED'`
fn isolation_level(i: Tokens<'_>) -> PResult<'_, IsolationLevel> {
    match i.keyword() {
        Some(Keyword::Serializable) => {
            value(IsolationLevel::Serializable, kw(Keyword::Serializable))(i)
        }
        Some(Keyword::Repeatable) => value(
            IsolationLevel::RepeatableRead,
            pair(kw(Keyword::Repeatable), cut(kw(Keyword::Read))),
        )(i),
        Some(Keyword::Read) => preceded(
            kw(Keyword::Read),
            cut(alt((
                value(IsolationLevel::ReadCommitted, kw(Keyword::Committed)),
                value(IsolationLevel::ReadUncommitted, kw(Keyword::Uncommitted)),
            ))),
        )(i),
        _ => i.fail(),
    }
}

/// `transaction_modes ::= transaction_mode {[','] transaction_mode}` (possibly none)
fn transaction_modes(i: Tokens<'_>) -> PResult<'_, TransactionModes> {
    fold_many0(
        terminated(transaction_mode, opt(tok(TokenKind::Comma))),
        TransactionModes::default,
        |modes, m| TransactionModes {
            isolation: m.isolation.or(modes.isolation),
            read_only: m.read_only.or(modes.read_only),
            deferrable: m.deferrable.or(modes.deferrable),
        },
    )(i)
}

/// `set ::= 'SET' ['SESSION' | 'LOCAL'] (var_name ('TO' | '=') ('DEFAULT' | set_arg {',' set_arg})
///   | 'TIME' 'ZONE' (set_arg | 'LOCAL' | 'DEFAULT'))`
/// `set_transaction ::= 'SET' ['SESSION' | 'LOCAL'] 'TRANSACTION' transaction_modes`
pub(crate) fn set(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Set).parse(i)?;
    let (i, scope) = opt(kw_of(&[Keyword::Local, Keyword::Session]))(i)?;
    let local = scope == Some(Keyword::Local);
    if i.is_kw(0, Keyword::Transaction) {
        return map(
            preceded(kw(Keyword::Transaction), cut(transaction_modes)),
            Statement::SetTransaction,
        )(i);
    }
    if i.is_kw(0, Keyword::Time) && i.is_kw(1, Keyword::Zone) {
        let (i, value) = preceded(
            pair(kw(Keyword::Time), kw(Keyword::Zone)),
            cut(alt((
                value(
                    SetValue::Default,
                    kw_of(&[Keyword::Local, Keyword::Default]),
                ),
                map(set_arg, |a| SetValue::Values(vec![a])),
            ))),
        )(i)?;
        let name = "timezone".to_string();
        return Ok((i, Statement::Set(Set { local, name, value })));
    }
    let (i, (name, _, value)) = cut(tuple((
        var_name,
        alt((kw(Keyword::To), tok(TokenKind::Eq))),
        alt((
            value(SetValue::Default, kw(Keyword::Default)),
            map(
                separated_list1(tok(TokenKind::Comma), cut(option_value)),
                SetValue::Values,
            ),
        )),
    )))(i)?;
    Ok((i, Statement::Set(Set { local, name, value })))
}

/// `set_arg ::= string | ['-' | '+'] number | word`
pub(crate) fn set_arg(i: Tokens<'_>) -> PResult<'_, SetArg> {
    let t = i.first();
    match t.kind {
        TokenKind::String(..) => map(string, SetArg::String)(i),
        TokenKind::Number => Ok((i.skip(1), SetArg::Number(i.text(t).to_string()))),
        TokenKind::Minus | TokenKind::Plus => {
            let rest = i.skip(1);
            let n = rest.first();
            if n.kind != TokenKind::Number {
                return rest.fail();
            }
            let sign = if t.kind == TokenKind::Minus { "-" } else { "" };
            Ok((rest.skip(1), SetArg::Number(format!("{sign}{}", i.text(n)))))
        }
        TokenKind::Word(_) | TokenKind::QuotedIdent(_) => {
            Ok((i.skip(1), SetArg::Word(ident_value(i, t))))
        }
        _ => i.fail(),
    }
}

/// `var_name ::= col_id {'.' col_id}`, lower-cased.
fn var_name(i: Tokens<'_>) -> PResult<'_, String> {
    let (i, first) = col_id(i)?;
    // The qualified parts, appended to the first (no vector of parts).
    let mut first = Some(first);
    fold_many0(
        preceded(tok(TokenKind::Dot), cut(col_id)),
        move || first.take().unwrap_or_default(),
        |mut name, part| {
            name.push('.');
            name.push_str(&part);
            name
        },
    )(i)
}

/// The parameter of SHOW or RESET:
/// `show_name ::= var_name | 'ALL' | 'TIME' 'ZONE' | 'TRANSACTION' 'ISOLATION' 'LEVEL'`
fn show_name(i: Tokens<'_>) -> PResult<'_, String> {
    if i.is_kw(0, Keyword::Time) && i.is_kw(1, Keyword::Zone) {
        return Ok((i.skip(2), "timezone".to_string()));
    }
    if i.is_kw(0, Keyword::Transaction) && i.is_kw(1, Keyword::Isolation) {
        return value(
            "transaction_isolation".to_string(),
            preceded(
                pair(kw(Keyword::Transaction), kw(Keyword::Isolation)),
                cut(kw(Keyword::Level)),
            ),
        )(i);
    }
    alt((map(kw(Keyword::All), |_| "all".to_string()), var_name))(i)
}

/// `show ::= 'SHOW' (var_name | 'ALL' | 'TIME' 'ZONE' | 'TRANSACTION' 'ISOLATION' 'LEVEL')`
pub(crate) fn show(i: Tokens<'_>) -> PResult<'_, Statement> {
    map(preceded(kw(Keyword::Show), cut(show_name)), |name| {
        Statement::Show(Show { name })
    })(i)
}

/// `reset ::= 'RESET' (var_name | 'ALL' | 'TIME' 'ZONE')`
pub(crate) fn reset(i: Tokens<'_>) -> PResult<'_, Statement> {
    map(preceded(kw(Keyword::Reset), cut(show_name)), |name| {
        Statement::Reset(Reset { name })
    })(i)
}
